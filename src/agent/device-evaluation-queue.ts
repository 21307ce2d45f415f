import type { EvaluateOptions, EvaluationRequest, Evaluator } from '../eval/evaluator.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import type { EvaluationQueue, QueuedEvaluation } from './evaluation-queue.js';

export interface DeviceEvaluationQueueOptions {
  /** Clock in milliseconds (injected for tests). */
  now?: () => number;
}

/** The device slot an evaluation needs: `cpu` for the cpu backend, `cuda:N` otherwise. */
export function deviceSlotOf(request: EvaluationRequest): string {
  return request.backend === 'cpu' ? 'cpu' : `cuda:${request.deviceIndex ?? 0}`;
}

/**
 * Runs evaluations one at a time per device, in the order they were submitted: building, checking
 * and timing of a candidate all hold the slot, so no two candidates are ever timed on one device
 * together. Different devices run in parallel. Overlapping builds with timing is a separate queue
 * behind the same interface.
 */
export class DeviceEvaluationQueue implements EvaluationQueue {
  private readonly slots = new ConcurrencyLimiter({ defaultLimit: 1 });
  private readonly now: () => number;
  private waitingOrRunning = 0;

  constructor(
    private readonly evaluator: Evaluator,
    options: DeviceEvaluationQueueOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  get pending(): number {
    return this.waitingOrRunning;
  }

  async submit(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<QueuedEvaluation> {
    const device = deviceSlotOf(request);
    const submittedAtMs = this.now();
    this.waitingOrRunning += 1;
    try {
      return await this.slots.run(
        device,
        async () => {
          const startedAtMs = this.now();
          const result = await this.evaluator.evaluate(request, options);
          return { result, deviceMs: this.now() - startedAtMs, waitedMs: startedAtMs - submittedAtMs, device };
        },
        options.signal,
      );
    } finally {
      this.waitingOrRunning -= 1;
    }
  }
}
