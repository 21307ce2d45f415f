import { runsOnHost } from '../../backends/registry.js';
import type { Logger } from 'pino';
import type { Backend } from '../../core/verdict.js';
import { openRedisJobQueue, type BullmqJobQueue, type OpenRedisJobQueueOptions } from '../../queue/redis/bullmq-job-queue.js';
import { JobQueueEvaluator } from '../../queue/job-queue-evaluator.js';
import { redactRedisUrl } from '../../queue/redis/redis-connection.js';
import type { TextSink } from '../io/cli-io.js';
import type { OpenedEvaluator } from './opened-evaluator.js';

/** How often the connected workers' devices are counted again, in ms. */
const SLOTS_REFRESH_MS = 5000;

/** Evaluation through a Redis queue: the evaluator an optimize run uses, and how to close it. */
export interface RemoteEvaluation extends OpenedEvaluator {
  evaluator: JobQueueEvaluator;
  /** Stops counting workers and closes the job queue (with `cancel`, its pending jobs are cancelled). */
  close(options?: { cancel?: boolean }): Promise<void>;
}

export interface RemoteEvaluationOptions {
  url: string;
  queueName?: string;
  /** Evaluations at once (`--remote-slots`); default: the devices of the workers connected, counted every few seconds. */
  slots?: number;
  backend: Backend;
  logger: Logger;
  /** Where what it decides is said (the command's stderr). */
  stderr: TextSink;
  openQueue?: (options: OpenRedisJobQueueOptions) => Promise<Pick<BullmqJobQueue, 'slots' | 'submit' | 'on' | 'counts' | 'close' | 'queueName'>>;
  refreshMs?: number;
}

/**
 * Connects to the Redis queue of `kforge optimize --redis` (throws `RedisUnreachableError` when
 * nothing answers) and makes its evaluator, at most `slots` jobs at once. Without `slots`, the
 * evaluations at once follow the devices of the connected workers of the backend's lane (at least
 * one, so a run waits for a worker rather than failing).
 */
export async function openRemoteEvaluation(options: RemoteEvaluationOptions): Promise<RemoteEvaluation> {
  const jobQueue = await (options.openQueue ?? openRedisJobQueue)({ url: options.url, queueName: options.queueName, logger: options.logger });
  const where = `queue ${jobQueue.queueName} at ${redactRedisUrl(options.url)}`;
  let slots = options.slots ?? (await jobQueue.slots(options.backend));
  if (options.slots !== undefined) options.stderr.write(`kforge optimize: evaluating through ${where}, ${slots} at once (--remote-slots)\n`);
  else if (slots === 0)
    options.stderr.write(
      `kforge optimize: no ${options.backend} worker is connected to ${where} yet; evaluations wait for one (start one with: kforge worker --redis ${redactRedisUrl(options.url)}${runsOnHost(options.backend) ? ` --backend ${options.backend}` : ''})\n`,
    );
  else options.stderr.write(`kforge optimize: evaluating through ${where} on the workers' ${slots} device${slots === 1 ? '' : 's'}\n`);
  const evaluator = new JobQueueEvaluator(jobQueue, { slots: () => slots });
  let timer: NodeJS.Timeout | undefined;
  if (options.slots === undefined) {
    timer = setInterval(() => {
      jobQueue
        .slots(options.backend)
        .then((count) => {
          slots = count;
          evaluator.refresh();
        })
        .catch((error: unknown) => options.logger.debug({ err: error }, 'could not count the workers; keeping the last count'));
    }, options.refreshMs ?? SLOTS_REFRESH_MS);
    timer.unref();
  }
  return {
    evaluator,
    close: async (closeOptions = {}) => {
      clearInterval(timer);
      await jobQueue.close(closeOptions);
    },
  };
}
