import type { Redis } from 'ioredis';
import { z } from 'zod';
import { backendSchema } from '../../core/verdict.js';
import { queueRedisKeys } from './redis-keys.js';

/** A job a worker is evaluating now. */
export const heartbeatJobSchema = z.object({
  jobId: z.string(),
  problem: z.string(),
  candidate: z.string(),
  attempt: z.number().int().positive(),
  /** `role:stage` of the stage running now (e.g. `candidate:correctness`), null between stages. */
  stage: z.string().nullable(),
  /** The device the job holds now, null when it holds none. */
  device: z.string().nullable(),
  startedAt: z.string(),
});
export type HeartbeatJob = z.infer<typeof heartbeatJobSchema>;

/**
 * What a worker writes about itself every few seconds, under a key that expires (three
 * heartbeat intervals) when the worker stops writing: `kforge workers` lists these.
 */
export const workerHeartbeatSchema = z.object({
  v: z.literal(1),
  id: z.string().min(1),
  host: z.string().min(1),
  pid: z.number().int().positive(),
  /** The queue name (`--queue`) and the lane's BullMQ queue it takes jobs from. */
  queue: z.string(),
  bullmqQueue: z.string(),
  backend: backendSchema,
  /** The devices it owns (`cpu`, or `cuda:N` with their host-wide lock names in `deviceLocks`). */
  devices: z.array(z.string()),
  deviceLocks: z.array(z.string()),
  /** Jobs it evaluates at once. */
  concurrency: z.number().int().positive(),
  state: z.enum(['ready', 'stopping']),
  jobs: z.array(heartbeatJobSchema),
  startedAt: z.string(),
  updatedAt: z.string(),
  jobsDone: z.number().int().nonnegative(),
  jobsFailed: z.number().int().nonnegative(),
  /** Heartbeat interval in ms (the key lives three of them). */
  intervalMs: z.number().int().positive(),
});
export type WorkerHeartbeat = z.infer<typeof workerHeartbeatSchema>;

/** Writes a heartbeat that expires after `ttlMs` unless written again. */
export async function writeWorkerHeartbeat(redis: Redis, heartbeat: WorkerHeartbeat, ttlMs: number): Promise<void> {
  await redis.set(queueRedisKeys(heartbeat.queue).worker(heartbeat.id), JSON.stringify(heartbeat), 'PX', ttlMs);
}

/** Removes a worker's heartbeat (it stopped). */
export async function removeWorkerHeartbeat(redis: Redis, queueName: string, workerId: string): Promise<void> {
  await redis.del(queueRedisKeys(queueName).worker(workerId));
}

/** The heartbeats of the workers of a queue name alive now, by host then id. Unreadable entries are skipped. */
export async function listWorkerHeartbeats(redis: Redis, queueName: string): Promise<WorkerHeartbeat[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', queueRedisKeys(queueName).workerPattern, 'COUNT', 200);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  const heartbeats: WorkerHeartbeat[] = [];
  for (const value of values) {
    if (value === null) continue;
    try {
      const parsed = workerHeartbeatSchema.safeParse(JSON.parse(value));
      if (parsed.success) heartbeats.push(parsed.data);
    } catch {
      // A heartbeat that is not JSON is skipped, as one of another version would be.
    }
  }
  return heartbeats.sort((a, b) => a.host.localeCompare(b.host) || a.id.localeCompare(b.id));
}

/** Evaluations the live workers of a lane can run at once: the sum of their concurrency. */
export function workerSlots(heartbeats: readonly WorkerHeartbeat[], bullmqQueue: string): number {
  return heartbeats
    .filter((heartbeat) => heartbeat.bullmqQueue === bullmqQueue && heartbeat.state === 'ready')
    .reduce((sum, heartbeat) => sum + heartbeat.concurrency, 0);
}
