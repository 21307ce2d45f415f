import { defaultBackendFor } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';

/**
 * The backend the workers connected to a Redis queue serve: the default GPU backend (cuda) when any
 * GPU worker is connected, else cpu when a cpu worker is, else null. The queue's client (bullmq) is loaded only when this
 * runs, so that `kforge optimize --help`, whose module re-exports this, does not load it.
 */
export async function connectedWorkersBackend(options: { url: string; queueName?: string | undefined }): Promise<Backend | null> {
  const { openRedisJobQueue } = await import('../../queue/redis/bullmq-job-queue.js');
  const queue = await openRedisJobQueue({ url: options.url, ...(options.queueName ? { queueName: options.queueName } : {}) });
  try {
    for (const gpu of [true, false]) {
      const backend = defaultBackendFor(gpu);
      if ((await queue.slots(backend)) > 0) return backend;
    }
    return null;
  } finally {
    await queue.close();
  }
}
