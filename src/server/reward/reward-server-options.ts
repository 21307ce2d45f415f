import type { Evaluator } from '../../eval/evaluator.js';

/** Defaults of the reward API's bounds. */
export const REWARD_DEFAULTS = {
  /** Evaluations handed to the evaluator at once. */
  concurrency: 32,
  /** Evaluations that may wait for a slot before requests are refused with 429. */
  maxWaiting: 1024,
} as const;

/**
 * What `createServer` needs to serve `POST /api/reward` and `/api/reward/batch`. The evaluator is
 * any {@link Evaluator}: a PipelinedEvaluator on this host, or a JobQueueEvaluator over the Redis
 * queue of `kforge worker` processes. The server does not close it: whoever opened it does, after
 * the server.
 */
export interface RewardServerOptions {
  evaluator: Evaluator;
  /**
   * Every reward request must carry it, on loopback too (at least 16 characters). When the server
   * also has its own `token`, pass the same one: both checks see the request's one token.
   */
  token: string;
  /** Evaluations handed to the evaluator at once. Default {@link REWARD_DEFAULTS}.concurrency. */
  concurrency?: number;
  /** Evaluations waiting for a slot, at most, before requests get 429. Default {@link REWARD_DEFAULTS}.maxWaiting. */
  maxWaiting?: number;
  /** Most candidates in one batch. Default 256. */
  maxBatch?: number;
  /** Shipped problems, named `level1/02_gelu` in requests. Default `<repo>/problems`. */
  problemsDirectory?: string;
  /** Where problem snapshots and candidate files are written. Default: a temporary folder removed on close. */
  workDirectory?: string;
}
