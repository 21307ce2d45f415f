import type { Logger } from 'pino';
import type { BaselineCache } from '../cache/baseline-cache.js';
import type { RandomInteger } from './seeds.js';

/**
 * What every evaluator that runs the Python worker takes (PythonEvaluator, PipelinedEvaluator):
 * where the worker is and how it starts, the baseline cache, and the injected logger, clock and
 * seed source. Each evaluator's own options extend it.
 */
export interface WorkerEvaluatorOptions {
  /** Folder holding the `kforge_worker` package (`<repo>/worker`). */
  workerDirectory: string;
  baselineCache: BaselineCache;
  /** Python executable. Default `python3`. */
  python?: string;
  /** The parent environment the workers' environment is filtered from. Default `process.env`. */
  environment?: NodeJS.ProcessEnv;
  /** Where scratch directories are made. Default: the system's temporary folder. */
  scratchRoot?: string;
  /** Keep each evaluation's scratch directory (its path is logged). Default false. */
  keepScratch?: boolean;
  /** Milliseconds between SIGTERM and SIGKILL when a stage expires. */
  terminationGraceMs?: number;
  logger?: Logger;
  /** Source of seeds; `crypto.randomInt` by default. */
  randomInteger?: RandomInteger;
  now?: () => Date;
}
