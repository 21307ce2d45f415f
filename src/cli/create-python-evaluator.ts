import { spawnSync } from 'node:child_process';
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
 * `KFORGE_KEEP_SCRATCH=1`. It has no build cache: `kforge eval` and `kforge optimize` evaluate with
 * `createLocalPipelinedEvaluator` instead; `kforge serve` falls back to this one.
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

const PYTHON_CANDIDATES = ['python3', '/usr/bin/python3'] as const;
const resolvedPythons = new Map<string, string>();

/**
 * The Python the worker runs under: `KFORGE_PYTHON` if set; else the first of `python3` on PATH and
 * `/usr/bin/python3` that can find torch (a pyenv or venv `python3` often lacks the Debian
 * PyTorch); else `python3`, so that `kforge doctor` can say what is missing. The probe imports
 * nothing (`importlib.util.find_spec`) and is done once per process.
 */
export function pythonExecutable(environment: NodeJS.ProcessEnv): string {
  const chosen = environment.KFORGE_PYTHON?.trim();
  if (chosen) return chosen;
  const key = environment.PATH ?? '';
  const cached = resolvedPythons.get(key);
  if (cached) return cached;
  const found = PYTHON_CANDIDATES.find((candidate) => canFindTorch(candidate, environment)) ?? 'python3';
  resolvedPythons.set(key, found);
  return found;
}

function canFindTorch(python: string, environment: NodeJS.ProcessEnv): boolean {
  const probe = spawnSync(python, ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") else 1)'], {
    env: environment,
    stdio: 'ignore',
    timeout: 20_000,
  });
  return probe.status === 0;
}
