import type { BatchRun, EvaluatedCandidate } from './batch-runs.js';
import type { BatchCandidate } from './candidate-batch.js';
import type { MemoryFigures } from './memory-batch.js';

/** Stages that run on the device (under its lease in the pipeline). */
const DEVICE_STAGES = ['reference', 'baseline', 'load', 'correctness', 'timing', 'judge'];

export interface WaySummary {
  candidates: number;
  wallS: number;
  devices: number;
  /** Candidates per device-hour: per GPU-hour on cuda, per CPU-hour (the one timing device) on cpu. */
  candidatesPerDeviceHour: number;
  /** Lease-held time over wall time × devices (pipelined only): the device was reserved this share. */
  deviceLeaseShare: number | null;
  /** Time in device stages over wall time × devices: the device was working at most this share. */
  deviceStageShare: number;
  /** CPU seconds of kforge's processes per candidate, and the mean number of cores they kept busy. */
  cpuSecondsPerCandidate: number | null;
  meanCoresBusy: number | null;
  verdicts: Record<string, number>;
}

export interface ReEvaluation {
  wallMs: number;
  deviceHeldMs: number | null;
  buildMs: number | null;
  cacheHit: boolean | null;
  /** Wall time outside the device lease: what re-evaluating costs beyond the device's own time. */
  overheadMs: number | null;
}

export interface Repeatability {
  candidate: string;
  mediansMs: number[];
  /** (max − min) / min of the medians. */
  spread: number;
  /** Coefficient of variation of the medians. */
  cv: number;
}

export function summarize(run: BatchRun): WaySummary {
  const stageMs = run.candidates.reduce((sum, entry) => sum + DEVICE_STAGES.reduce((inner, stage) => inner + (entry.stages[stage] ?? 0), 0), 0);
  // The device time of the candidates' leases and of the baseline prefetches' own leases.
  const held = run.candidates.reduce((sum, entry) => sum + (entry.deviceHeldMs ?? 0), 0) + (run.usage?.prefetches.deviceMs ?? 0);
  const verdicts: Record<string, number> = {};
  for (const entry of run.candidates) verdicts[entry.verdict] = (verdicts[entry.verdict] ?? 0) + 1;
  const capacityMs = run.wallMs * run.devices;
  return {
    candidates: run.candidates.length,
    wallS: run.wallMs / 1000,
    devices: run.devices,
    candidatesPerDeviceHour: run.candidates.length / (capacityMs / 3_600_000),
    deviceLeaseShare: run.usage ? held / capacityMs : null,
    deviceStageShare: stageMs / capacityMs,
    cpuSecondsPerCandidate: run.childCpuS === null ? null : run.childCpuS / run.candidates.length,
    meanCoresBusy: run.childCpuS === null ? null : run.childCpuS / (run.wallMs / 1000),
    verdicts,
  };
}

/** Candidates whose verdict or reason checks differ between the two ways. */
export function verdictMismatches(
  first: readonly EvaluatedCandidate[],
  second: readonly EvaluatedCandidate[],
): Array<{ id: string; sequential: string; pipelined: string }> {
  const key = (entry: EvaluatedCandidate): string => `${entry.verdict}${entry.checks.length > 0 ? ` (${[...entry.checks].sort().join(', ')})` : ''}`;
  const other = new Map(second.map((entry) => [entry.id, entry]));
  return first
    .map((entry) => ({ id: entry.id, sequential: key(entry), pipelined: other.has(entry.id) ? key(other.get(entry.id)!) : 'missing' }))
    .filter((pair) => pair.sequential !== pair.pipelined);
}

export function repeatability(candidate: string, entries: readonly EvaluatedCandidate[]): Repeatability | null {
  const medians = entries.map((entry) => entry.medianMs).filter((value): value is number => value !== null);
  if (medians.length < 2) return null;
  const mean = medians.reduce((sum, value) => sum + value, 0) / medians.length;
  const std = Math.sqrt(medians.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (medians.length - 1));
  return { candidate, mediansMs: medians, spread: (Math.max(...medians) - Math.min(...medians)) / Math.min(...medians), cv: std / mean };
}

const seconds = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : `${(ms / 1000).toFixed(2)} s`);
const percent = (share: number | null): string => (share === null ? '—' : `${(share * 100).toFixed(1)}%`);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export interface ReportParts {
  title: string;
  measuredAt: string;
  command: string;
  host: string;
  deviceWord: string;
  batch: readonly BatchCandidate[];
  sequential: BatchRun | null;
  pipelined: BatchRun;
  reEvaluations: ReEvaluation[];
  repeat: Repeatability | null;
  memory: MemoryFigures | null;
  /** 1-minute load average per phase (other work on the machine shows here). */
  loadByPhase?: Record<string, { mean: number; max: number; samples: number }>;
}

/** The markdown table and notes of one benchmark run. */
export function renderMarkdown(parts: ReportParts): string {
  const pipelined = summarize(parts.pipelined);
  const sequential = parts.sequential ? summarize(parts.sequential) : null;
  const row = (way: string, summary: WaySummary): string =>
    `| ${way} | ${summary.candidates} | ${summary.devices} | ${summary.wallS.toFixed(1)} s | ${summary.candidatesPerDeviceHour.toFixed(1)} | ${percent(summary.deviceLeaseShare)} | ${percent(summary.deviceStageShare)} | ${summary.cpuSecondsPerCandidate === null ? '—' : summary.cpuSecondsPerCandidate.toFixed(1)} | ${summary.meanCoresBusy === null ? '—' : summary.meanCoresBusy.toFixed(2)} |`;
  const lines = [
    `# ${parts.title}`,
    '',
    `Measured ${parts.measuredAt} on ${parts.host}.`,
    '',
    `Command: \`${parts.command}\``,
    '',
    `| way | candidates | ${parts.deviceWord}s | wall | candidates per ${parts.deviceWord}-hour | ${parts.deviceWord} leased | ${parts.deviceWord} stages | CPU s per candidate | cores busy (mean) |`,
    '|---|---|---|---|---|---|---|---|---|',
    ...(sequential ? [row('one fresh process per candidate', sequential)] : []),
    row('pipelined (build pool, build cache, warm workers, leases)', pipelined),
    '',
  ];
  const bytecode = parts.pipelined.bytecode;
  if (bytecode) {
    lines.push(
      bytecode.prefix === null
        ? 'Bytecode cache: not used (the installed packages carry their own bytecode, or it is off).'
        : `Bytecode cache: the pipelined workers read primed bytecode from \`${bytecode.prefix}\` (ready ${seconds(bytecode.readyAfterMs)} after the start; the one-process way compiles what it imports, as before).`,
      '',
    );
  }
  if (parts.loadByPhase && Object.keys(parts.loadByPhase).length > 0) {
    const phases = Object.entries(parts.loadByPhase).map(([name, load]) => `${name} ${load.mean.toFixed(1)} (max ${load.max.toFixed(1)})`);
    lines.push(`Load average (1 min) during each phase, mean: ${phases.join(', ')}.`, '');
  }
  const prefetches = parts.pipelined.usage?.prefetches;
  if (prefetches && prefetches.measured + prefetches.cached + prefetches.failed > 0) {
    lines.push(
      `Baselines measured ahead of the candidates (the pipeline's baseline prefetch, while they built): ${prefetches.measured} problems measured, ${prefetches.cached} found already measured, ${prefetches.failed} failed; the prefetches held the ${parts.deviceWord} ${(prefetches.deviceMs / 1000).toFixed(1)} s in all (counted in the leased share).`,
      '',
    );
  }
  if (sequential && parts.sequential) {
    const mismatches = verdictMismatches(parts.sequential.candidates, parts.pipelined.candidates);
    lines.push(
      `Throughput ratio, pipelined / one process per candidate: **${(pipelined.candidatesPerDeviceHour / sequential.candidatesPerDeviceHour).toFixed(2)}x**.`,
      '',
    );
    const compared = parts.sequential.candidates.length;
    if (compared < pipelined.candidates) {
      lines.push(
        `The one-process way ran on ${compared} of the ${pipelined.candidates} candidates, spread evenly over the batch (\`--sequential-sample\`); the ratio compares the two ways' candidates per ${parts.deviceWord}-hour, and verdicts are compared on those ${compared}.`,
        '',
      );
    }
    lines.push(
      mismatches.length === 0
        ? `Verdicts identical both ways: **yes**, ${compared} of ${compared}.`
        : `Verdicts identical both ways: **no**: ${mismatches.map((item) => `${item.id} (${item.sequential} / ${item.pipelined})`).join('; ')}.`,
      '',
    );
  }
  const overheads = parts.reEvaluations
    .map((entry) => entry.overheadMs)
    .filter((value): value is number => value !== null)
    .sort((a, b) => a - b);
  if (parts.reEvaluations.length > 0) {
    lines.push(`Re-evaluating an already-built candidate (${parts.reEvaluations.length} times, pipeline otherwise idle):`, '');
    lines.push('| wall | device held | build stage | worker reported cache hit | wall outside the lease |', '|---|---|---|---|---|');
    for (const entry of parts.reEvaluations)
      lines.push(
        `| ${seconds(entry.wallMs)} | ${seconds(entry.deviceHeldMs)} | ${seconds(entry.buildMs)} | ${entry.cacheHit === null ? '—' : entry.cacheHit ? 'yes' : 'no'} | ${seconds(entry.overheadMs)} |`,
      );
    if (overheads.length > 0) lines.push('', `Median wall time outside the device lease: **${seconds(overheads[Math.floor(overheads.length / 2)]!)}**.`);
    lines.push('');
  }
  if (parts.repeat) {
    const { mediansMs, spread, cv, candidate } = parts.repeat;
    lines.push(
      `Repeatability: \`${candidate}\` evaluated ${mediansMs.length} times in one batch: medians ${Math.min(...mediansMs).toPrecision(4)}–${Math.max(...mediansMs).toPrecision(4)} ms, spread (max − min) / min **${(spread * 100).toFixed(2)}%**, CV ${(cv * 100).toFixed(2)}%.`,
      '',
    );
  }
  if (parts.memory) lines.push(...renderMemory(parts.memory));
  lines.push(
    '| candidate | made from | variant | verdict | one process: wall | pipelined: build reused | median ms (one process / pipelined) | pipelined: 95% interval, eager, compile (ms, each with its interval) | pipelined: device held |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  const sequentialById = new Map(parts.sequential?.candidates.map((entry) => [entry.id, entry]) ?? []);
  const pipelinedById = new Map(parts.pipelined.candidates.map((entry) => [entry.id, entry]));
  for (const candidate of parts.batch) {
    const one = sequentialById.get(candidate.id);
    const piped = pipelinedById.get(candidate.id);
    const median = (entry: EvaluatedCandidate | undefined): string =>
      entry?.medianMs === null || entry?.medianMs === undefined ? '—' : entry.medianMs.toPrecision(4);
    const hit = piped?.buildCacheHit === null || piped?.buildCacheHit === undefined ? '—' : piped.buildCacheHit ? 'yes' : 'no';
    const figure = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toPrecision(4));
    const range = (interval: [number, number] | null | undefined): string => (interval ? `[${figure(interval[0])}, ${figure(interval[1])}]` : '');
    const interval = range(piped?.ci95Ms) || '—';
    lines.push(
      `| ${candidate.id} | ${candidate.origin} | ${candidate.variant} | ${piped?.verdict ?? '—'}${one && one.verdict !== piped?.verdict ? ` (one process: ${one.verdict})` : ''} | ${seconds(one?.wallMs)} | ${hit} | ${median(one)} / ${median(piped)} | ${interval}, ${figure(piped?.eagerMs)} ${range(piped?.eagerCi95Ms)}, ${figure(piped?.compileMs)} ${range(piped?.compileCi95Ms)} | ${seconds(piped?.deviceHeldMs)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The memory batch's lines: the samples and the second-half slopes. */
export function renderMemory(memory: MemoryFigures): string[] {
  const first = memory.samples[1] ?? memory.samples[0]!;
  const last = memory.samples.at(-1)!;
  const step = Math.max(1, Math.floor(memory.samples.length / 6));
  return [
    `Orchestrator memory over ${memory.candidates} pure-PyTorch candidates (${(memory.wallMs / 1000).toFixed(0)} s, ${memory.candidatesPerHour.toFixed(0)} candidates per hour; verdicts ${JSON.stringify(memory.verdicts)}; heap after a forced GC: ${memory.forcedGc ? 'yes' : 'no'}):`,
    '',
    '| after candidates | heap used | rss |',
    '|---|---|---|',
    ...memory.samples
      .filter((_, index) => index % step === 0 || index === memory.samples.length - 1)
      .map((entry) => `| ${entry.completed} | ${mib(entry.heapUsedBytes)} | ${mib(entry.rssBytes)} |`),
    '',
    `Second-half slope: heap ${(memory.heapSlopeBytesPerCandidate / 1024).toFixed(2)} KiB per candidate, rss ${(memory.rssSlopeBytesPerCandidate / 1024).toFixed(2)} KiB per candidate (heap ${mib(first.heapUsedBytes)} after ${first.completed}, ${mib(last.heapUsedBytes)} after ${last.completed}).`,
    '',
  ];
}
