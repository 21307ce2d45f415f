import type { Backend } from '../../core/verdict.js';

/**
 * The backend the workers connected to a Redis queue serve: cuda when any GPU worker is connected,
 * else cpu when a cpu worker is, else null. The queue's client (bullmq) is loaded only when this
 * runs, so that `kforge optimize --help`, whose module re-exports this, does not load it.
 */
export async function connectedWorkersBackend(options: { url: string; queueName?: string | undefined }): Promise<Backend | null> {
  const { openRedisJobQueue } = await import('../../queue/redis/bullmq-job-queue.js');
  const queue = await openRedisJobQueue({ url: options.url, ...(options.queueName ? { queueName: options.queueName } : {}) });
  try {
    if ((await queue.slots('cuda')) > 0) return 'cuda';
    if ((await queue.slots('cpu')) > 0) return 'cpu';
    return null;
  } finally {
    await queue.close();
  }
}
