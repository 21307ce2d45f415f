import { Queue, QueueEvents } from 'bullmq';
import type { Logger } from 'pino';
import type { LaneKind } from '../../eval/pipeline/pipeline-lane.js';
import { redisConnectionOptions } from './redis-connection.js';
import { bullmqQueueName } from './redis-keys.js';

/** What a coordinator does with BullMQ's events of a lane (job ids are BullMQ's). */
export interface LaneEventHandlers {
  active(jobId: string): void;
  finished(jobId: string): void;
  progress(jobId: string, data: unknown): void;
}

/** BullMQ's job counts of one lane's queue. */
export type LaneJobCounts = Record<'waiting' | 'active' | 'completed' | 'failed' | 'delayed' | 'prioritized', number>;

/**
 * The BullMQ queues of a queue name's two lanes (`<name>-cpu`, `<name>-gpu`) and their event
 * streams, each made on first use with kforge's connection options (reconnect forever, commands
 * wait across a Redis restart).
 */
export class BullmqLanes {
  readonly #url: string;
  readonly #queueName: string;
  readonly #logger: Logger;
  readonly #queues = new Map<LaneKind, Queue>();
  readonly #events = new Map<LaneKind, QueueEvents>();

  constructor(options: { url: string; queueName: string; logger: Logger }) {
    this.#url = options.url;
    this.#queueName = options.queueName;
    this.#logger = options.logger;
  }

  queue(lane: LaneKind): Queue {
    let queue = this.#queues.get(lane);
    if (!queue) {
      queue = new Queue(bullmqQueueName(this.#queueName, lane), { connection: redisConnectionOptions(this.#url) });
      queue.on('error', (error) => this.#logger.debug({ err: error }, 'BullMQ queue error (Redis unreachable?)'));
      this.#queues.set(lane, queue);
    }
    return queue;
  }

  /** Starts listening to a lane's events once; later calls do nothing. */
  listen(lane: LaneKind, handlers: LaneEventHandlers): void {
    if (this.#events.has(lane)) return;
    const events = new QueueEvents(bullmqQueueName(this.#queueName, lane), { connection: redisConnectionOptions(this.#url) });
    events.on('error', (error) => this.#logger.debug({ err: error }, 'BullMQ events error (Redis unreachable?)'));
    events.on('active', ({ jobId }) => handlers.active(jobId));
    events.on('completed', ({ jobId }) => handlers.finished(jobId));
    events.on('failed', ({ jobId }) => handlers.finished(jobId));
    events.on('progress', ({ jobId, data }) => handlers.progress(jobId, data));
    this.#events.set(lane, events);
  }

  /** Job counts of both lanes. */
  async counts(): Promise<Record<LaneKind, LaneJobCounts>> {
    const lanes: LaneKind[] = ['cpu', 'gpu'];
    const counts = await Promise.all(lanes.map((lane) => this.queue(lane).getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized')));
    return Object.fromEntries(lanes.map((lane, index) => [lane, counts[index] as LaneJobCounts])) as Record<LaneKind, LaneJobCounts>;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#events.values()].map((events) => events.close().catch(() => undefined)));
    await Promise.all([...this.#queues.values()].map((queue) => queue.close().catch(() => undefined)));
  }
}
