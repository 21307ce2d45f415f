import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluateOptions, EvaluationRequest } from '../eval/evaluator.js';

/** One finished evaluation and what it cost the device. */
export interface QueuedEvaluation {
  result: EvaluationResult;
  /** Time the evaluation held its device, in ms (build included: the slot was taken). */
  deviceMs: number;
  /** Time it waited for the device, in ms. */
  waitedMs: number;
  /** The device slot it ran on, e.g. `cuda:0` or `cpu`. */
  device: string;
}

/**
 * Where strategies send candidates to be judged. Implementations decide how work shares devices;
 * the contract is that two evaluations never time on one device at once. An abort while waiting
 * rejects without evaluating; an abort while running is passed to the evaluator.
 */
export interface EvaluationQueue {
  submit(request: EvaluationRequest, options?: EvaluateOptions): Promise<QueuedEvaluation>;
  /** Evaluations waiting or running now. */
  readonly pending: number;
}
