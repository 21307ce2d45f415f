import path from 'node:path';
import type { EvaluationResult } from '../../src/core/verdict.js';
import { BuildCache, defaultBuildCacheDirectory } from '../../src/eval/cache/build-cache.js';
import type { EvaluationRequest } from '../../src/eval/evaluator.js';
import { FileBaselineCache } from '../../src/eval/cache/file-baseline-cache.js';
import { InProcessJobQueue } from '../../src/queue/in-process-job-queue.js';
import type { PipelineEvent } from '../../src/eval/pipeline-events.js';
import type { PipelineSizing } from '../../src/eval/pipeline/pipeline-sizing.js';
import { PipelinedEvaluator } from '../../src/eval/pipeline/pipelined-evaluator.js';
import type { PipelineUsage } from '../../src/eval/pipeline/pipelined-evaluator-options.js';
import { PythonEvaluator } from '../../src/eval/run/python-evaluator.js';
import type { BatchCandidate } from './candidate-batch.js';
import { reapedChildCpuSeconds } from './child-cpu.js';
import { reasonLine } from '../bench-support.js';

function cpuSince(before: number | null): number | null {
  const now = reapedChildCpuSeconds();
  return before === null || now === null ? null : now - before;
}

/** What a benchmark run needs to build evaluators and requests. */
export interface BenchSettings {
  backend: EvaluationRequest['backend'];
  python: string;
  workerDirectory: string;
  /** Fresh folder for this run's caches and scratch directories. */
  workDirectory: string;
  trials: number;
  perfTrials: number;
  skipTiming?: boolean;
  /** Guard policy of every request (the memory batch's plain-PyTorch candidates need `pytorch`). */
  guardPolicy?: string;
  sizing?: Partial<PipelineSizing>;
  log: (line: string) => void;
}

/** One candidate's evaluation as the benchmark keeps it. Times in ms from the start of its run. */
export interface EvaluatedCandidate {
  id: string;
  verdict: string;
  checks: string[];
  /** The first reason of a verdict other than `correct` (bench-support's reasonLine). */
  reason?: string | null;
  medianMs: number | null;
  /** The 95% interval of the candidate's median, and the baselines' medians it was compared with. */
  ci95Ms?: [number, number] | null;
  eagerMs?: number | null;
  compileMs?: number | null;
  /** The baselines' 95% intervals of their medians. */
  eagerCi95Ms?: [number, number] | null;
  compileCi95Ms?: [number, number] | null;
  stages: Record<string, number>;
  /** Sequential: the evaluation's wall time. Pipelined: submit to result. */
  wallMs: number;
  buildCacheHit?: boolean | null;
  deviceHeldMs?: number;
  device?: string;
  error?: string;
  /** What the workers reported about the machine (dropped from the JSON but for the first). */
  environment?: EvaluationResult['environment'];
}

export interface BatchRun {
  wallMs: number;
  devices: number;
  /** CPU seconds of every process the run started (workers, ninja, compilers), where /proc tells. */
  childCpuS: number | null;
  candidates: EvaluatedCandidate[];
  usage?: PipelineUsage;
  /** The bytecode-cache prefix the pipelined workers ran with (null: none), and when it was ready. */
  bytecode?: { prefix: string | null; readyAfterMs: number };
}

export function requestFor(candidate: BatchCandidate, settings: BenchSettings): EvaluationRequest {
  return {
    problemPath: candidate.problemPath,
    candidatePath: candidate.candidatePath,
    backend: settings.backend,
    precision: 'fp32',
    tolerance: 'kernelbench',
    trials: settings.trials,
    perfTrials: settings.perfTrials,
    ...(settings.skipTiming ? { skipTiming: true } : {}),
    ...(settings.guardPolicy ? { guardPolicy: settings.guardPolicy } : {}),
  };
}

function kept(id: string, result: EvaluationResult, wallMs: number): EvaluatedCandidate {
  return {
    id,
    verdict: result.verdict,
    checks: result.reasons.map((reason) => reason.check),
    reason: result.verdict === 'correct' || !result.reasons[0] ? null : reasonLine(result.reasons[0]),
    medianMs: result.timing?.candidate_ms.median ?? null,
    ci95Ms: result.timing?.candidate_ms.ci95 ?? null,
    eagerMs: result.timing?.eager_ms?.median ?? null,
    compileMs: result.timing?.compile_ms?.median ?? null,
    eagerCi95Ms: result.timing?.eager_ms?.ci95 ?? null,
    compileCi95Ms: result.timing?.compile_ms?.ci95 ?? null,
    stages: result.stages ?? {},
    wallMs,
    environment: result.environment,
  };
}

function failed(id: string, error: unknown, wallMs: number): EvaluatedCandidate {
  return { id, verdict: 'evaluator-error', checks: [], medianMs: null, stages: {}, wallMs, error: error instanceof Error ? error.message : String(error) };
}

/** The one-fresh-process-per-candidate way: PythonEvaluator, one candidate after another. */
/** `count` entries spread evenly over `items` (all of them when `count` is unset or not smaller). */
export function evenlySpaced<T>(items: readonly T[], count: number | undefined): T[] {
  if (count === undefined || count >= items.length) return [...items];
  return Array.from({ length: count }, (_, index) => items[Math.floor((index * items.length) / count)]!);
}

export async function runSequential(batch: readonly BatchCandidate[], settings: BenchSettings): Promise<BatchRun> {
  const evaluator = new PythonEvaluator({
    workerDirectory: settings.workerDirectory,
    python: settings.python,
    baselineCache: new FileBaselineCache({ directory: path.join(settings.workDirectory, 'sequential', 'baselines') }),
    scratchRoot: settings.workDirectory,
  });
  const started = performance.now();
  const cpuBefore = reapedChildCpuSeconds();
  const candidates: EvaluatedCandidate[] = [];
  for (const [index, candidate] of batch.entries()) {
    const before = performance.now();
    try {
      candidates.push(kept(candidate.id, (await evaluator.evaluate(requestFor(candidate, settings))).result, performance.now() - before));
    } catch (error) {
      candidates.push(failed(candidate.id, error, performance.now() - before));
    }
    const last = candidates[candidates.length - 1]!;
    settings.log(`sequential ${index + 1}/${batch.length} ${candidate.id}: ${last.verdict} in ${(last.wallMs / 1000).toFixed(1)} s`);
  }
  return { wallMs: performance.now() - started, devices: 1, childCpuS: cpuSince(cpuBefore), candidates };
}

/** A pipelined evaluator and its job queue on this run's own caches. */
export function createPipeline(settings: BenchSettings): { evaluator: PipelinedEvaluator; queue: InProcessJobQueue; buildCache: BuildCache } {
  const buildCache = new BuildCache({ directory: path.join(settings.workDirectory, 'pipelined', 'builds') });
  const evaluator = new PipelinedEvaluator({
    workerDirectory: settings.workerDirectory,
    python: settings.python,
    baselineCache: new FileBaselineCache({ directory: path.join(settings.workDirectory, 'pipelined', 'baselines') }),
    buildCache,
    scratchRoot: settings.workDirectory,
    // Machine state like the installed packages (primed once, read-only), not part of the cold caches.
    bytecodeCacheDirectory: path.join(path.dirname(defaultBuildCacheDirectory(process.env, process.cwd())), 'pycache'),
    ...(settings.sizing ? { sizing: settings.sizing } : {}),
  });
  return { evaluator, queue: new InProcessJobQueue({ evaluator }), buildCache };
}

/** Submits every candidate at once to the queue; the wall time counts from `startedAtMs` (before the warm-up). */
export async function runThroughQueue(
  queue: InProcessJobQueue,
  batch: readonly BatchCandidate[],
  settings: BenchSettings,
  label: string,
  startedAtMs = performance.now(),
): Promise<EvaluatedCandidate[]> {
  const events = new Map<string, PipelineEvent[]>();
  const stop = queue.on('job-pipeline', ({ jobId, event }) => events.set(jobId, [...(events.get(jobId) ?? []), event]));
  let done = 0;
  try {
    return await Promise.all(
      batch.map(async (candidate, index) => {
        const jobId = `${label}-${index}`;
        const submitted = performance.now();
        let entry: EvaluatedCandidate;
        try {
          entry = kept(candidate.id, await queue.submit(requestFor(candidate, settings), { jobId }), performance.now() - submitted);
        } catch (error) {
          entry = failed(candidate.id, error, performance.now() - submitted);
        }
        const seen = events.get(jobId) ?? [];
        const built = seen.find((event) => event.kind === 'build-finished');
        const released = seen.find((event) => event.kind === 'device-released');
        entry.buildCacheHit = built?.kind === 'build-finished' ? built.cacheHit : null;
        if (released?.kind === 'device-released') {
          entry.deviceHeldMs = released.heldMs;
          entry.device = released.device;
        }
        done += 1;
        settings.log(
          `${label} ${done}/${batch.length} ${candidate.id}: ${entry.verdict} (${((performance.now() - startedAtMs) / 1000).toFixed(1)} s into the run)`,
        );
        return entry;
      }),
    );
  } finally {
    stop();
  }
}

/** The pipelined way over the whole batch, from a cold start (the warm-up counts). */
export async function runPipelined(batch: readonly BatchCandidate[], settings: BenchSettings, pipeline: ReturnType<typeof createPipeline>): Promise<BatchRun> {
  const started = performance.now();
  const cpuBefore = reapedChildCpuSeconds();
  const bytecode = pipeline.evaluator.bytecodePrefix().then((prefix) => ({ prefix, readyAfterMs: performance.now() - started }));
  const devices = await pipeline.evaluator.warmUp(settings.backend);
  const candidates = await runThroughQueue(pipeline.queue, batch, settings, 'pipelined', started);
  // Warm workers still idle at this point have not been reaped: their start-up is not counted.
  const wallMs = performance.now() - started;
  return { wallMs, devices: devices.length, childCpuS: cpuSince(cpuBefore), candidates, usage: await pipeline.evaluator.usage(), bytecode: await bytecode };
}
