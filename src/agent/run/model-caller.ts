import type { ChatMessage, KernelModel, ModelReply } from '../../llm/kernel-model.js';
import { ModelCallError } from '../../llm/model-call-error.js';
import { ModelExhaustedError } from '../../llm/model-exhausted-error.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import { SearchStoppedError } from '../search/state/search-stopped-error.js';

export interface CallModelOptions {
  model: KernelModel;
  /** Keyed by the model's provider name. */
  limiter: ConcurrencyLimiter;
  messages: ChatMessage[];
  /** The run's signal; its abort stops the call and throws `SearchStoppedError`. */
  signal: AbortSignal;
  /** Wall-clock budget left, in ms: the call is cancelled when it runs out. `Infinity` for none. */
  remainingMs: number;
  temperature?: number;
}

/**
 * A call's outcome. `exhausted` says the model will never answer again (a replay ran out of
 * replies). A call cut by the wall-clock budget is an ordinary failure: the budget ends the search.
 */
export type ModelCallOutcome = { kind: 'replied'; reply: ModelReply } | { kind: 'failed'; message: string; latencyMs: number; exhausted: boolean };

/**
 * Calls the model once, within the provider's concurrency limit and the wall-clock budget. A
 * provider that fails (after its own retries) or hangs past the budget is an outcome, not an
 * exception; only the run's own stop throws.
 */
export async function callModel(options: CallModelOptions): Promise<ModelCallOutcome> {
  const { model, signal } = options;
  const startedAtMs = Date.now();
  // A timer of our own rather than AbortSignal.timeout: that one does not keep the process alive,
  // and a hanging provider may be the only thing left for the run to wait on.
  const budget = Number.isFinite(options.remainingMs) ? new AbortController() : null;
  const timer = budget ? setTimeout(() => budget.abort(new Error('the wall-clock budget ran out')), Math.max(1, options.remainingMs)) : null;
  const budgetSignal = budget?.signal ?? null;
  const callSignal = budgetSignal ? AbortSignal.any([signal, budgetSignal]) : signal;
  try {
    const reply = await options.limiter.run(
      model.describe().provider,
      () =>
        model.generate({
          messages: options.messages,
          signal: callSignal,
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        }),
      signal,
    );
    return { kind: 'replied', reply };
  } catch (error) {
    if (signal.aborted) throw new SearchStoppedError('model-call', { cause: error });
    const latencyMs = Date.now() - startedAtMs;
    if (budgetSignal?.aborted) {
      return { kind: 'failed', message: 'the wall-clock budget ran out while the model was answering', latencyMs, exhausted: false };
    }
    if (ModelExhaustedError.isInstance(error)) return { kind: 'failed', message: error.message, latencyMs, exhausted: true };
    if (ModelCallError.isInstance(error)) return { kind: 'failed', message: error.message, latencyMs: error.elapsedMs, exhausted: false };
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
