import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import type { PipelinedEvaluateOptions } from '../eval/pipeline-events.js';
import { deviceSlotOf } from './device-evaluation-queue.js';
import type { EvaluationQueue, QueuedEvaluation } from './evaluation-queue.js';

/** What a {@link PipelineEvaluationQueue} sends its requests to: a PipelinedEvaluator. */
export interface LeasingEvaluator {
  evaluate(request: EvaluationRequest, options?: PipelinedEvaluateOptions): Promise<EvaluationResult>;
}

/**
 * The {@link EvaluationQueue} of a local `kforge optimize` over a PipelinedEvaluator: every request
 * goes to the pipeline at once, which builds them in parallel on the host's cores and gives each
 * its device alone for the stages that run there (its lease), so the queue's contract (never two
 * timings on one device) is the pipeline's. A search that submits several candidates (`sample`,
 * `ideas`, several problems) no longer waits for one candidate's nvcc before the next one's starts.
 *
 * `deviceMs` is how long the evaluation held its device (the lease; 0 when it never took one, as a
 * build failure does not), `waitedMs` the time from submit to the lease (or to the result), and
 * `device` the one it held (the request's slot when it held none).
 */
export class PipelineEvaluationQueue implements EvaluationQueue {
  #pending = 0;

  constructor(
    private readonly evaluator: LeasingEvaluator,
    private readonly now: () => number = Date.now,
  ) {}

  get pending(): number {
    return this.#pending;
  }

  async submit(request: EvaluationRequest, options: PipelinedEvaluateOptions = {}): Promise<QueuedEvaluation> {
    const submittedAtMs = this.now();
    let device: string | null = null;
    let acquiredAtMs: number | null = null;
    let heldMs = 0;
    this.#pending += 1;
    try {
      const result = await this.evaluator.evaluate(request, {
        ...options,
        onPipelineEvent: (event) => {
          if (event.kind === 'device-acquired') {
            device = event.device;
            acquiredAtMs = this.now();
          } else if (event.kind === 'device-released') {
            heldMs += event.heldMs;
          }
          options.onPipelineEvent?.(event);
        },
      });
      return {
        result,
        deviceMs: heldMs,
        waitedMs: (acquiredAtMs ?? this.now()) - submittedAtMs,
        device: device ?? deviceSlotOf(request),
      };
    } finally {
      this.#pending -= 1;
    }
  }
}
