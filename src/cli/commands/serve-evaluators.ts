import type { Logger } from 'pino';
import type { Evaluator } from '../../eval/evaluator.js';
import type { JobQueue } from '../../queue/job-queue.js';
import { openRedisJobQueue, type OpenRedisJobQueueOptions } from '../../queue/redis/bullmq-job-queue.js';
import { ON_DEMAND_SIZING } from '../evaluator/create-worker-evaluator.js';
import { openEvaluator, type OpenedEvaluator } from '../evaluator/open-evaluator.js';
import { problemFolderReaderFor } from '../evaluator/problem-folders.js';
import type { CliIo } from '../io/cli-io.js';

type EvaluatorWiring = { logger: Logger; environment: NodeJS.ProcessEnv; cwd: string };

/** What {@link openServeEvaluators} needs: the parsed flags it reads and the dependencies tests replace. */
export interface ServeEvaluatorsRequest {
  io: CliIo;
  logger: Logger;
  redis: string | undefined;
  queue: string | undefined;
  /** Whether the reward API is on (it gets an evaluator of its own, or the queue's). */
  reward: boolean;
  createEvaluator: ((wiring: EvaluatorWiring) => Evaluator) | undefined;
  createRewardEvaluator: ((wiring: EvaluatorWiring) => Evaluator | Promise<Evaluator>) | undefined;
  openRedisQueue: ((options: OpenRedisJobQueueOptions) => Promise<JobQueue>) | undefined;
}

/** The evaluators `kforge serve` uses, and how to close them all (newest first). */
export interface ServeEvaluators {
  editing: Evaluator;
  rewarding: Evaluator | undefined;
  close(): Promise<void>;
}

/**
 * Opens the evaluators of `kforge serve`. With --redis, the reward API and the dashboard's edits
 * evaluate on the `kforge worker` processes of the queue, through one evaluator. Else edits run on
 * this host's pipeline (build cache, host-wide GPU locks, workers started on demand) and reward
 * requests on a pipeline of their own (warm workers); both take the same host-wide device locks.
 * On a failure it closes what it had opened before rethrowing.
 */
export async function openServeEvaluators(request: ServeEvaluatorsRequest): Promise<ServeEvaluators> {
  const opened: OpenedEvaluator[] = [];
  const close = async (): Promise<void> => {
    for (const each of opened.splice(0).reverse()) await each.close({ cancel: true });
  };
  try {
    if (request.redis) {
      const queue = await (request.openRedisQueue ?? openRedisJobQueue)({
        url: request.redis,
        ...(request.queue ? { queueName: request.queue } : {}),
        logger: request.logger,
      });
      const remote = await openEvaluator({ kind: 'queue', queue, problemFolders: problemFolderReaderFor(request.io) });
      opened.push(remote);
      return { editing: remote.evaluator, rewarding: request.reward ? remote.evaluator : undefined, close };
    }
    return { ...(await openLocalEvaluators(request, opened)), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The local pipelines: one for edits (workers on demand) and, with the reward API, one of warm workers. */
async function openLocalEvaluators(request: ServeEvaluatorsRequest, opened: OpenedEvaluator[]): Promise<Omit<ServeEvaluators, 'close'>> {
  const { createEvaluator, createRewardEvaluator, io, logger } = request;
  const wiring = { logger, environment: io.environment, cwd: io.cwd };
  const local = await openEvaluator({
    kind: 'local',
    wiring,
    pipeline: { sizing: ON_DEMAND_SIZING },
    ...(createEvaluator ? { create: () => createEvaluator(wiring) } : {}),
  });
  opened.push(local);
  if (!request.reward) return { editing: local.evaluator, rewarding: undefined };
  const reward = await openEvaluator({ kind: 'local', wiring, ...(createRewardEvaluator ? { create: () => createRewardEvaluator(wiring) } : {}) });
  opened.push(reward);
  return { editing: local.evaluator, rewarding: reward.evaluator };
}
