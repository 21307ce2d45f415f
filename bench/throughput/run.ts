/**
 * kforge's evaluation-throughput benchmark: one batch of distinct candidates made from the shipped
 * examples (some that do not build, some wrong), evaluated the pipelined way and the
 * one-fresh-process-per-candidate way in one run, plus re-evaluations of a built candidate, the
 * repeatability of one candidate's median within a batch and (cpu, on request) the orchestrator's
 * memory over a long pure-PyTorch batch. Writes result.json and result.md into --out.
 *
 *   node --import tsx bench/throughput/run.ts --backend cpu|cuda [--problems 6] [--limit N] [--trials 5]
 *     [--perf-trials 100] [--repeats 10] [--re-evaluations 3] [--memory-batch 0] [--skip-sequential]
 *     [--build-concurrency N] [--out DIR] [--python PY] [--worker-dir DIR] [--include-timeouts]
 *     [--sequential-sample N] (the one-process way on N candidates spread evenly over the batch: on a
 *     GPU it costs about a minute a candidate, so a lease may not cover the whole batch)
 *     [--memory-only] (with --memory-batch N: only the orchestrator-memory batch)
 *
 * Progress goes to stderr; the path of the markdown report to stdout.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { REPOSITORY_ROOT, WORKER_DIRECTORY } from '../../src/core/repository-paths.js';
import {
  createPipeline,
  evenlySpaced,
  runPipelined,
  runSequential,
  runThroughQueue,
  type BatchRun,
  type BenchSettings,
  type EvaluatedCandidate,
} from './batch-runs.js';
import { generateCandidateBatch } from './candidate-batch.js';
import { runMemoryBatch, type MemoryFigures } from './memory-batch.js';
import { renderMarkdown, renderMemory, repeatability, summarize, verdictMismatches, type ReEvaluation } from './report.js';
import { count, cpuModel, log } from '../bench-support.js';

const argumentsSchema = z.object({
  backend: z.enum(['cpu', 'cuda'], { error: (issue) => `expected \`--backend\` to be cpu or cuda, got \`${String(issue.input)}\`` }),
  problems: count('problems', 1).default(6),
  trials: count('trials', 1).default(5),
  'perf-trials': count('perf-trials', 1).default(100),
  repeats: count('repeats', 0).default(10),
  're-evaluations': count('re-evaluations', 0).default(3),
  'memory-batch': count('memory-batch', 0).default(0),
  'build-concurrency': count('build-concurrency', 1).optional(),
  'sequential-sample': count('sequential-sample', 1).optional(),
  limit: count('limit', 1).optional(),
  'skip-sequential': z.boolean().default(false),
  'memory-only': z.boolean().default(false),
  'include-timeouts': z.boolean().default(false),
  out: z.string().min(1).optional(),
  python: z
    .string()
    .min(1)
    .default(process.env.KFORGE_PYTHON ?? 'python3'),
  'worker-dir': z
    .string()
    .min(1)
    .default(process.env.KFORGE_WORKER_DIR ?? WORKER_DIRECTORY),
});

function parse(): z.infer<typeof argumentsSchema> {
  const strings = [
    'backend',
    'limit',
    'problems',
    'trials',
    'perf-trials',
    'repeats',
    're-evaluations',
    'memory-batch',
    'build-concurrency',
    'sequential-sample',
    'out',
    'python',
    'worker-dir',
  ];
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(strings.map((name) => [name, { type: 'string' as const }])),
      'skip-sequential': { type: 'boolean' },
      'memory-only': { type: 'boolean' },
      'include-timeouts': { type: 'boolean' },
    },
    strict: true,
  });
  const parsed = argumentsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(`bench/throughput: ${parsed.error.issues[0]?.message ?? 'invalid arguments'}\n`);
    process.exit(2);
  }
  return parsed.data;
}

/** A candidate evaluated alone, again and again, after its build is cached. */
async function reEvaluate(
  queue: ReturnType<typeof createPipeline>['queue'],
  candidate: Parameters<typeof runThroughQueue>[1][number],
  settings: BenchSettings,
  times: number,
): Promise<ReEvaluation[]> {
  const runs: ReEvaluation[] = [];
  for (let index = 0; index < times; index += 1) {
    const [entry] = await runThroughQueue(queue, [candidate], settings, `re-evaluation-${index}`);
    const held = entry?.deviceHeldMs ?? null;
    runs.push({
      wallMs: entry!.wallMs,
      deviceHeldMs: held,
      buildMs: entry?.stages.build ?? null,
      cacheHit: entry?.buildCacheHit ?? null,
      overheadMs: held === null ? null : entry!.wallMs - held,
    });
  }
  return runs;
}

/** The 1-minute load average every 5 s, by phase: the benchmark shares its machine with whatever else runs. */
function loadSampler(): { phase: (name: string) => void; stop: () => Record<string, { mean: number; max: number; samples: number }> } {
  const samples: Array<[string, number]> = [];
  let current = 'setup';
  const timer = setInterval(() => samples.push([current, os.loadavg()[0] ?? 0]), 5000);
  timer.unref();
  return {
    phase: (name) => void (current = name),
    stop: () => {
      clearInterval(timer);
      const phases: Record<string, { mean: number; max: number; samples: number }> = {};
      for (const [name, load] of samples) {
        const entry = (phases[name] ??= { mean: 0, max: 0, samples: 0 });
        entry.mean = (entry.mean * entry.samples + load) / (entry.samples + 1);
        entry.max = Math.max(entry.max, load);
        entry.samples += 1;
      }
      return phases;
    },
  };
}

const withoutEnvironment = (run: BatchRun | null) => run && { ...run, candidates: run.candidates.map(({ environment: _environment, ...entry }) => entry) };

const MEMORY_PROBLEM = path.join(REPOSITORY_ROOT, 'bench', 'throughput', 'memory-problem.py');

/** `--memory-only`: the orchestrator-memory batch alone. */
async function memoryOnly(count: number, settings: BenchSettings, out: string, measuredAt: string, load: ReturnType<typeof loadSampler>): Promise<void> {
  if (count < 1) throw new RangeError('expected `--memory-batch` to be at least 1 with `--memory-only`');
  load.phase('memory');
  const memory = await runMemoryBatch(MEMORY_PROBLEM, count, { ...settings, trials: 1, skipTiming: true, guardPolicy: 'pytorch' });
  const loadByPhase = load.stop();
  const command = `node --import tsx bench/throughput/run.ts ${process.argv.slice(2).join(' ')}`;
  const host = `${os.hostname()}: ${await cpuModel()} (${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB)`;
  await writeFile(
    path.join(out, 'result.json'),
    `${JSON.stringify({ measured_at: measuredAt, command, host, memory, load_average_by_phase: loadByPhase }, null, 2)}\n`,
    'utf8',
  );
  const phases = Object.entries(loadByPhase)
    .map(([name, entry]) => `${name} ${entry.mean.toFixed(1)} (max ${entry.max.toFixed(1)})`)
    .join(', ');
  const markdown = [
    `# kforge orchestrator memory, ${settings.backend} backend`,
    '',
    `Measured ${measuredAt} on ${host}.`,
    '',
    `Command: \`${command}\``,
    '',
    `Load average (1 min), mean: ${phases}.`,
    '',
    ...renderMemory(memory),
  ];
  await writeFile(path.join(out, 'result.md'), `${markdown.join('\n')}\n`, 'utf8');
  process.stdout.write(`${path.join(out, 'result.md')}\n`);
}

async function main(): Promise<void> {
  const args = parse();
  const measuredAt = new Date().toISOString();
  const out = path.resolve(
    args.out ?? path.join(REPOSITORY_ROOT, 'bench', 'throughput', 'results', `${args.backend}-${measuredAt.slice(0, 19).replace(/:/g, '')}`),
  );
  await mkdir(out, { recursive: true });
  const workDirectory = await mkdtemp(path.join(os.tmpdir(), 'kforge-throughput-'));
  const settings: BenchSettings = {
    backend: args.backend,
    python: args.python,
    workerDirectory: path.resolve(args['worker-dir']),
    workDirectory,
    trials: args.trials,
    perfTrials: args['perf-trials'],
    ...(args['build-concurrency'] ? { sizing: { buildConcurrency: args['build-concurrency'] } } : {}),
    log,
  };
  const load = loadSampler();
  try {
    if (args['memory-only']) {
      await memoryOnly(args['memory-batch'], settings, out, measuredAt, load);
      return;
    }
    const batch = await generateCandidateBatch({
      repositoryRoot: REPOSITORY_ROOT,
      backend: args.backend,
      directory: path.join(out, 'candidates'),
      problems: args.problems,
      includeTimeouts: args['include-timeouts'],
      ...(args.limit ? { limit: args.limit } : {}),
    });
    log(`batch: ${batch.length} distinct candidates over ${new Set(batch.map((candidate) => candidate.problemPath)).size} problems, backend ${args.backend}`);

    const pipeline = createPipeline(settings);
    load.phase('pipelined');
    const pipelined = await runPipelined(batch, settings, pipeline);
    log(`pipelined: ${batch.length} candidates in ${(pipelined.wallMs / 1000).toFixed(1)} s`);
    const correct = batch.find(
      (candidate) => candidate.variant === 'shipped' && pipelined.candidates.find((entry) => entry.id === candidate.id)?.verdict === 'correct',
    );
    load.phase('re-evaluations');
    const reEvaluations = correct ? await reEvaluate(pipeline.queue, correct, settings, args['re-evaluations']) : [];
    const repeated: EvaluatedCandidate[] =
      correct && args.repeats > 0
        ? await runThroughQueue(
            pipeline.queue,
            Array.from({ length: args.repeats }, () => correct),
            settings,
            'repeat',
          )
        : [];
    const buildStats = await pipeline.buildCache.stats();
    await pipeline.queue.close();
    const repeat = correct ? repeatability(correct.id, repeated) : null;
    if (repeat)
      log(
        `repeatability of ${repeat.candidate}: medians ${repeat.mediansMs.map((value) => value.toPrecision(4)).join(', ')} ms, spread ${(repeat.spread * 100).toFixed(2)}%`,
      );
    const pipelinedRecord = { summary: summarize(pipelined), build_cache: buildStats, ...withoutEnvironment(pipelined) };
    // What the pipelined phases found, written before the one-process way starts: a run cut off
    // there (a lease that ends) still leaves its figures.
    await writeFile(
      path.join(out, 'partial.json'),
      `${JSON.stringify({ measured_at: measuredAt, pipelined: pipelinedRecord, re_evaluations: reEvaluations, repeatability: repeat }, null, 2)}\n`,
      'utf8',
    );

    load.phase('sequential');
    const sequentialBatch = evenlySpaced(batch, args['sequential-sample']);
    const sequential = args['skip-sequential'] ? null : await runSequential(sequentialBatch, settings);
    load.phase('memory');
    const memory: MemoryFigures | null =
      args['memory-batch'] > 0
        ? await runMemoryBatch(MEMORY_PROBLEM, args['memory-batch'], { ...settings, trials: 1, skipTiming: true, guardPolicy: 'pytorch' })
        : null;

    const environment = pipelined.candidates.find((entry) => entry.environment)?.environment ?? null;
    const device = args.backend === 'cpu' ? 'CPU' : 'GPU';
    const gpus = environment && args.backend !== 'cpu' ? `${pipelined.devices} × ${environment.device}, ` : '';
    const host = `${os.hostname()}: ${gpus}${await cpuModel()} (${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB), torch ${environment?.torch ?? '?'}${environment?.cuda ? `, CUDA ${environment.cuda}` : ''}`;
    const command = `node --import tsx bench/throughput/run.ts ${process.argv.slice(2).join(' ')}`;
    const loadByPhase = load.stop();
    const result = {
      measured_at: measuredAt,
      command,
      host,
      environment,
      settings: {
        backend: args.backend,
        trials: args.trials,
        perf_trials: args['perf-trials'],
        problems: args.problems,
        candidates: batch.length,
        sequential_candidates: sequential ? sequentialBatch.length : 0,
        sizing: settings.sizing ?? null,
      },
      pipelined: pipelinedRecord,
      sequential: sequential ? { summary: summarize(sequential), ...withoutEnvironment(sequential) } : null,
      ratio: sequential ? summarize(pipelined).candidatesPerDeviceHour / summarize(sequential).candidatesPerDeviceHour : null,
      verdict_mismatches: sequential ? verdictMismatches(sequential.candidates, pipelined.candidates) : null,
      re_evaluations: reEvaluations,
      repeatability: repeat,
      memory,
      load_average_by_phase: loadByPhase,
      batch,
    };
    await writeFile(path.join(out, 'result.json'), `${JSON.stringify(result, null, 2)}\n`, 'utf8');
    const markdown = renderMarkdown({
      title: `kforge evaluation throughput, ${args.backend} backend`,
      measuredAt,
      command,
      host,
      deviceWord: device,
      batch,
      sequential,
      pipelined,
      reEvaluations,
      repeat,
      memory,
      loadByPhase,
    });
    await writeFile(path.join(out, 'result.md'), markdown, 'utf8');
    process.stdout.write(`${path.join(out, 'result.md')}\n`);
  } finally {
    await rm(workDirectory, { recursive: true, force: true });
  }
}

await main();
