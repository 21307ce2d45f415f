import type { JobQueue } from '../../queue/job-queue.js';

/** Defaults of the reward API's bounds. */
export const REWARD_DEFAULTS = {
  /** Evaluations handed to the job queue at once. */
  concurrency: 32,
  /** Evaluations that may wait for a slot before requests are refused with 429. */
  maxWaiting: 1024,
} as const;

/**
 * What `createServer` needs to serve `POST /api/reward` and `/api/reward/batch`. The queue is any
 * {@link JobQueue}: in this process (InProcessJobQueue over a PipelinedEvaluator) or shared by
 * machines (BullMQ). The server does not close it: whoever made it does, after the server.
 */
export interface RewardServerOptions {
  queue: JobQueue;
  /**
   * Every reward request must carry it, on loopback too (at least 16 characters). When the server
   * also has its own `token`, pass the same one: both checks see the request's one token.
   */
  token: string;
  /** Evaluations handed to the queue at once. Default {@link REWARD_DEFAULTS}.concurrency. */
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
