import path from 'node:path';
import type { Logger } from 'pino';
import { WORKER_DIRECTORY } from '../core/repository-paths.js';
import { defaultBaselineCacheDirectory } from '../eval/baseline-cache.js';
import { FileBaselineCache } from '../eval/file-baseline-cache.js';
import { PythonEvaluator } from '../eval/python-evaluator.js';

export interface PythonEvaluatorWiring {
  environment: NodeJS.ProcessEnv;
  cwd: string;
  logger: Logger;
  /** A `--cache-dir` flag: the baselines folder itself. */
  baselineCacheDirectory?: string;
}

/**
 * The PythonEvaluator as configured by the environment: `KFORGE_PYTHON` (default `python3`),
 * `KFORGE_WORKER_DIR` (default `<repo>/worker`), `KFORGE_CACHE_DIR` (baselines under
 * `$KFORGE_CACHE_DIR/baselines`, default `.kforge/baselines` in the working directory) and
 * `KFORGE_KEEP_SCRATCH=1`. Every command that evaluates (eval, optimize, serve) wires it this way.
 */
export function createPythonEvaluator(wiring: PythonEvaluatorWiring): PythonEvaluator {
  const { environment, cwd } = wiring;
  const cacheDirectory = wiring.baselineCacheDirectory
    ? path.resolve(cwd, wiring.baselineCacheDirectory)
    : defaultBaselineCacheDirectory(environment, cwd);
  return new PythonEvaluator({
    workerDirectory: environment.KFORGE_WORKER_DIR ? path.resolve(cwd, environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    python: pythonExecutable(environment),
    baselineCache: new FileBaselineCache({ directory: cacheDirectory }),
    environment,
    keepScratch: environment.KFORGE_KEEP_SCRATCH === '1',
    logger: wiring.logger,
  });
}

/** `KFORGE_PYTHON`, else `python3`. */
export function pythonExecutable(environment: NodeJS.ProcessEnv): string {
  return environment.KFORGE_PYTHON?.trim() || 'python3';
}
