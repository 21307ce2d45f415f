import { runsOnHost } from '../../backends/registry.js';
import path from 'node:path';
import type { Logger } from 'pino';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import type { Backend } from '../../core/verdict.js';
import { defaultBaselineCacheDirectory } from '../../eval/cache/baseline-cache.js';
import { BuildCache, buildCacheMaxBytes, defaultBuildCacheDirectory } from '../../eval/cache/build-cache.js';
import { FileBaselineCache } from '../../eval/cache/file-baseline-cache.js';
import { PipelinedEvaluator } from '../../eval/pipeline/pipelined-evaluator.js';
import type { PipelinedEvaluatorOptions } from '../../eval/pipeline/pipelined-evaluator-options.js';
import { sandboxPolicy, type SandboxPolicy } from '../../eval/process/worker-sandbox.js';
import { pythonExecutable } from '../io/python-executable.js';
import { UsageError } from '../io/usage-error.js';

export interface WorkerEvaluatorWiring {
  environment: NodeJS.ProcessEnv;
  cwd: string;
  logger: Logger;
  backend: Backend;
  /** The worker's GPUs as `cuda:N` (GPU backends). */
  cudaDevices: readonly string[];
  /** Jobs at once on the cpu backend: that many warm candidate workers are kept. */
  concurrency: number;
  /** A `--cache-dir` flag: the cache root (`builds/`, `baselines/`, `pycache/`), as `KFORGE_CACHE_DIR` names it. */
  cacheDirectory?: string;
}

/**
 * The sizing of a pipeline that evaluates a candidate now and then (`kforge eval`, the dashboard's
 * edits): no idle warm workers are kept, so the candidate and reference workers start when an
 * evaluation takes them and no spare is left holding a CUDA context.
 */
export const ON_DEMAND_SIZING = { warmCandidatesPerDevice: 0, warmReferencesPerDevice: 0 } as const;

/** Where and how a local PipelinedEvaluator runs, beyond what the environment says. */
export interface LocalPipelineWiring {
  environment: NodeJS.ProcessEnv;
  cwd: string;
  logger: Logger;
  /** A `--cache-dir` flag: the cache root (`builds/`, `baselines/`, `pycache/`), in place of `KFORGE_CACHE_DIR` (else `.kforge`). */
  cacheDirectory?: string;
}

/**
 * A PipelinedEvaluator on this host, as `kforge eval`, `kforge optimize`, `kforge serve --reward`
 * and `kforge worker` evaluate locally: baselines and builds under `KFORGE_CACHE_DIR` (else
 * `.kforge`: `baselines/`, `builds/`), `KFORGE_PYTHON`, `KFORGE_WORKER_DIR`,
 * `KFORGE_KEEP_SCRATCH=1`, `KFORGE_SANDBOX`; its GPUs are locked host-wide while a candidate holds them; `options`
 * for its devices, sizing and lock folder. Throws `UsageError` for a malformed build-cache bound or sandbox mode.
 * Close it (`close()`) when done, so no warm worker outlives the command.
 */
export function createLocalPipelinedEvaluator(
  wiring: LocalPipelineWiring,
  options: Pick<PipelinedEvaluatorOptions, 'sizing' | 'cudaDevices' | 'deviceLockDirectory'> = {},
): PipelinedEvaluator {
  const { cwd, logger } = wiring;
  const environment = wiring.cacheDirectory ? { ...wiring.environment, KFORGE_CACHE_DIR: path.resolve(cwd, wiring.cacheDirectory) } : wiring.environment;
  let maxBytes: number;
  try {
    maxBytes = buildCacheMaxBytes(environment);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const baselines = defaultBaselineCacheDirectory(environment, cwd);
  const buildDirectory = defaultBuildCacheDirectory(environment, cwd);
  let sandbox: SandboxPolicy;
  try {
    // Hidden from candidates: the cache root and the default store's folder.
    sandbox = sandboxPolicy(environment, path.dirname(buildDirectory), { alsoHidden: [baselines, path.join(cwd, '.kforge')] });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return new PipelinedEvaluator({
    workerDirectory: environment.KFORGE_WORKER_DIR ? path.resolve(cwd, environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    python: pythonExecutable(environment),
    baselineCache: new FileBaselineCache({ directory: baselines }),
    buildCache: new BuildCache({ directory: buildDirectory, maxBytes, logger }),
    sandbox,
    environment,
    keepScratch: environment.KFORGE_KEEP_SCRATCH === '1',
    logger,
    ...options,
  });
}

/**
 * The pipeline of `kforge worker`: a local PipelinedEvaluator on the worker's own GPUs (or the
 * CPU). On the cpu backend it keeps one warm candidate worker per concurrent job and one warm
 * reference worker, so two workers on a small host do not import torch a dozen times at once.
 */
export function workerPipelineOptions(wiring: WorkerEvaluatorWiring): Pick<PipelinedEvaluatorOptions, 'sizing' | 'cudaDevices'> {
  return runsOnHost(wiring.backend)
    ? { sizing: { warmCandidatesPerDevice: wiring.concurrency, warmReferencesPerDevice: 1 } }
    : { cudaDevices: wiring.cudaDevices };
}
