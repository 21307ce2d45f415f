import type { Command } from 'commander';
import { formatTextTable } from '../../core/text-table.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { z } from 'zod';
import { openRedisJobQueue, type BullmqJobQueue, type LaneJobCounts, type OpenRedisJobQueueOptions } from '../../queue/redis/bullmq-job-queue.js';
import type { LaneKind } from '../../eval/pipeline/pipeline-lane.js';
import { DEFAULT_QUEUE_NAME, QUEUE_NAME_PATTERN } from '../../queue/redis/redis-keys.js';
import { RedisUnreachableError } from '../../queue/redis/redis-unreachable-error.js';
import type { WorkerHeartbeat } from '../../queue/redis/queue-worker-heartbeat.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { UsageError } from '../io/usage-error.js';

/** What `kforge workers` needs beyond its io; tests replace any of it. */
export interface WorkersCommandDependencies extends Partial<CliIo> {
  openQueue?: (options: OpenRedisJobQueueOptions) => Promise<Pick<BullmqJobQueue, 'workers' | 'queueCounts' | 'close'>>;
  /** Clock for the "seen Ns ago" column. Default `Date.now`. */
  now?: () => number;
}

const flagsSchema = z.object({
  redis: z.string({ error: 'expected `--redis` to name a Redis URL, e.g. redis://127.0.0.1:6379' }).min(1),
  queue: z.string().regex(QUEUE_NAME_PATTERN, 'expected `--queue` to be letters, digits, `_`, `.` or `-` (at most 64)').default(DEFAULT_QUEUE_NAME),
  json: z.boolean().default(false),
});

/** The JSON `kforge workers --json` prints. */
export interface WorkersReport {
  queue: string;
  workers: WorkerHeartbeat[];
  jobs: Record<LaneKind, LaneJobCounts>;
}

function doing(worker: WorkerHeartbeat): string {
  if (worker.jobs.length === 0) return worker.state === 'stopping' ? 'stopping' : 'idle';
  const jobs = worker.jobs.map(
    (job) => `${job.candidate} [${job.stage ?? 'between stages'}${job.device ? ` on ${job.device}` : ''}${job.attempt > 1 ? `, attempt ${job.attempt}` : ''}]`,
  );
  return `${worker.state === 'stopping' ? 'stopping; ' : ''}${jobs.join('; ')}`;
}

/** The workers as a table, then one line of job counts per lane. */
export function formatWorkersReport(report: WorkersReport, nowMs: number): string {
  const header = ['WORKER', 'HOST', 'PID', 'BACKEND', 'DEVICES', 'DONE', 'FAILED', 'SEEN', 'DOING'];
  const rows = report.workers.map((worker) => [
    worker.id,
    worker.host,
    String(worker.pid),
    worker.backend,
    worker.devices.join(','),
    String(worker.jobsDone),
    String(worker.jobsFailed),
    `${Math.max(0, Math.round((nowMs - Date.parse(worker.updatedAt)) / 1000))}s ago`,
    doing(worker),
  ]);
  const table =
    report.workers.length === 0
      ? [`no worker is connected to queue ${report.queue} (start one with: kforge worker --redis URL)`]
      : formatTextTable([header, ...rows]);
  const counts = (Object.entries(report.jobs) as Array<[LaneKind, LaneJobCounts]>).map(
    ([lane, jobs]) =>
      `jobs ${report.queue}-${lane}: ${jobs.waiting + jobs.prioritized + jobs.delayed} waiting, ${jobs.active} active, ${jobs.completed} completed, ${jobs.failed} failed`,
  );
  return [...table, ...counts].join('\n');
}

/**
 * Adds `kforge workers --redis URL`: the workers connected to a queue (from their heartbeats),
 * their devices and what each is doing, and the queue's job counts; `--json` prints
 * {@link WorkersReport}. Exit status 0, or 2 when Redis is unreachable.
 */
export function registerWorkersCommand(program: Command, dependencies: WorkersCommandDependencies = {}): Command {
  return program
    .command('workers')
    .description(COMMAND_DESCRIPTIONS.workers)
    .option('--redis <url>', 'the Redis the workers use, e.g. redis://127.0.0.1:6379')
    .option('--queue <name>', `queue name (default ${DEFAULT_QUEUE_NAME})`)
    .option('--json', 'print one JSON object { queue, workers, jobs }')
    .action(async (rawOptions: unknown) => {
      const io = resolveCliIo(dependencies);
      try {
        const parsed = flagsSchema.safeParse(rawOptions);
        if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
        const { redis, queue: queueName, json } = parsed.data;
        const queue = await (dependencies.openQueue ?? openRedisJobQueue)({ url: redis, queueName });
        try {
          const [workers, jobs] = await Promise.all([queue.workers(), queue.queueCounts()]);
          const report: WorkersReport = { queue: queueName, workers, jobs };
          io.stdout.write(`${json ? JSON.stringify(report) : formatWorkersReport(report, (dependencies.now ?? Date.now)())}\n`);
        } finally {
          await queue.close();
        }
        io.setExitCode(0);
      } catch (error) {
        if (error instanceof UsageError || error instanceof RedisUnreachableError) {
          io.stderr.write(`kforge workers: ${error.message}\n`);
          return io.setExitCode(EXIT.usage);
        }
        throw error;
      }
    });
}
