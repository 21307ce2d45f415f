import { generateText, type LanguageModel, type ModelMessage } from 'ai';
import { setTimeout as wait } from 'node:timers/promises';
import { classifyModelError, type ClassifiedFailure } from './classify-model-error.js';
import type { ChatMessage, FailedAttempt, KernelModel, KernelModelRequest, ModelDescription, ModelReply, ReasoningEffort } from '../kernel-model.js';
import { ModelCallError } from '../model-call-error.js';
import { computeCost, createPriceTable, type PriceTable } from '../usage/price-table.js';
import type { ProviderFamily } from './provider-presets.js';
import { reasoningProviderOptions } from './reasoning-provider-options.js';
import { DEFAULT_BACKOFF, nextDelayMs, type BackoffOptions } from './retry-policy.js';

/** Waits `durationMs` milliseconds, or rejects as soon as `signal` aborts (injected in tests). Default: node:timers/promises. */
export type SleepFunction = (durationMs: number, signal?: AbortSignal) => Promise<unknown>;

type GenerateTextResult = Awaited<ReturnType<typeof generateText>>;

/** Any AI SDK language model object (not a gateway id string). */
export type SdkLanguageModel = Exclude<LanguageModel, string>;

/** Generation settings used when a request leaves them unset. */
export interface GenerationDefaults {
  temperature?: number;
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
}

export interface AiSdkKernelModelOptions {
  /** The AI SDK model to call, e.g. `createOpenAI({ apiKey }).responses('gpt-5')`. */
  model: SdkLanguageModel;
  /** Which API the model speaks; decides how reasoning effort is mapped. */
  family: ProviderFamily;
  /** Provider name for records (`vllm`, `openai`, …). Default: the SDK model's `provider`. */
  provider?: string;
  /** Model id for records and prices. Default: the SDK model's `modelId`. */
  modelId?: string;
  defaults?: GenerationDefaults;
  /** Limit on one attempt, in seconds. Default 300. */
  timeoutSeconds?: number;
  /** Attempts in all, the first included. Default 4. */
  maxAttempts?: number;
  backoff?: Partial<BackoffOptions>;
  /** Default: the built-in price table. */
  prices?: PriceTable;
  /** Values removed from every message this model produces (the API key in use). */
  secrets?: readonly string[];
  /** Injected for tests. */
  sleep?: SleepFunction;
  /** Injected for tests: numbers in [0, 1) for jitter. */
  random?: () => number;
  /** Injected for tests: current time, Unix epoch milliseconds. */
  now?: () => number;
  /** Called after each failed attempt (for logs and progress). */
  onAttemptFailed?: (attempt: FailedAttempt, model: ModelDescription) => void;
}

/**
 * A `KernelModel` over any AI SDK (ai@6) language model, through `generateText`.
 *
 * Each attempt has its own time-out (combined with the caller's signal). Retryable failures — 429,
 * 5xx, time-outs, dropped connections — are retried with jittered exponential backoff, honouring
 * Retry-After, up to `maxAttempts`; then, or at once for anything else, a `ModelCallError` is
 * thrown. The SDK's own retries are off so every attempt is ours and recorded.
 */
export class AiSdkKernelModel implements KernelModel {
  private readonly model: SdkLanguageModel;
  private readonly family: ProviderFamily;
  private readonly provider: string;
  private readonly modelId: string;
  private readonly defaults: GenerationDefaults;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: BackoffOptions;
  private readonly prices: PriceTable;
  private readonly secrets: readonly string[];
  private readonly sleep: SleepFunction;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly onAttemptFailed: AiSdkKernelModelOptions['onAttemptFailed'];

  constructor(options: AiSdkKernelModelOptions) {
    this.model = options.model;
    this.family = options.family;
    this.provider = options.provider ?? options.model.provider;
    this.modelId = options.modelId ?? options.model.modelId;
    this.defaults = options.defaults ?? {};
    this.timeoutMs = (options.timeoutSeconds ?? 300) * 1000;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 4));
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.prices = options.prices ?? createPriceTable();
    this.secrets = options.secrets ?? [];
    this.sleep = options.sleep ?? ((durationMs, signal) => wait(durationMs, undefined, signal ? { signal } : {}));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.onAttemptFailed = options.onAttemptFailed;
  }

  describe(): ModelDescription {
    return { provider: this.provider, modelId: this.modelId };
  }

  async generate(request: KernelModelRequest): Promise<ModelReply> {
    const startedAt = this.now();
    const failedAttempts: FailedAttempt[] = [];
    // Retried here, not by the AI SDK (its calls get maxRetries: 0): the SDK's own retry hides each
    // attempt, while kforge records every failed one (its class, latency, the wait before the next).
    for (let attempt = 1; ; attempt++) {
      const attemptStartedAt = this.now();
      const outcome = await this.attempt(request);
      if (outcome.ok) return this.toReply(outcome.result, startedAt, attempt, failedAttempts);

      const callerAborted = request.signal?.aborted ?? false;
      const failure = classifyModelError(outcome.error, {
        timedOut: outcome.timedOut && !callerAborted,
        callerAborted,
        secrets: this.secrets,
        nowMs: this.now(),
      });
      const giveUp = !failure.isRetryable || attempt >= this.maxAttempts;
      const waitedMs = giveUp ? 0 : nextDelayMs(attempt, failure.retryAfterMs, this.backoff, this.random);
      const record = this.recordAttempt(attempt, failure, this.now() - attemptStartedAt, waitedMs);
      failedAttempts.push(record);
      this.onAttemptFailed?.(record, this.describe());
      if (giveUp) throw this.callError(failure, attempt, failedAttempts, startedAt, outcome.error);
      try {
        await this.sleep(waitedMs, request.signal);
      } catch (abortError) {
        const abortReason: unknown = request.signal?.reason ?? abortError;
        const aborted: ClassifiedFailure = {
          reason: 'aborted',
          isRetryable: false,
          message: 'the call was cancelled by its caller while waiting to retry',
        };
        throw this.callError(aborted, attempt, failedAttempts, startedAt, abortReason);
      }
    }
  }

  /** One call under its own time-out; never throws. */
  private async attempt(request: KernelModelRequest): Promise<{ ok: true; result: GenerateTextResult } | { ok: false; error: unknown; timedOut: boolean }> {
    const timeout = startTimeout(this.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
    try {
      if (request.signal?.aborted) throw request.signal.reason;
      const result = await generateText({ ...this.callSettings(request), maxRetries: 0, abortSignal: signal });
      return { ok: true, result };
    } catch (error) {
      return { ok: false, error, timedOut: timeout.signal.aborted };
    } finally {
      timeout.clear();
    }
  }

  private callSettings(request: KernelModelRequest) {
    const effort = request.reasoningEffort ?? this.defaults.reasoningEffort;
    const temperature = request.temperature ?? this.defaults.temperature;
    const maxOutputTokens = request.maxOutputTokens ?? this.defaults.maxOutputTokens;
    const providerOptions = reasoningProviderOptions(this.family, effort);
    const { system, messages } = splitSystemPrompt(request.messages);
    return {
      model: this.model,
      ...(system === undefined ? {} : { system }),
      messages,
      allowSystemInMessages: messages.some((message) => message.role === 'system'),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      ...(providerOptions === undefined ? {} : { providerOptions }),
    };
  }

  private toReply(result: GenerateTextResult, startedAt: number, attempt: number, failedAttempts: FailedAttempt[]): ModelReply {
    const reasoningTokens = result.usage.outputTokenDetails?.reasoningTokens;
    const usage = {
      inputTokens: result.usage.inputTokens ?? 0,
      outputTokens: result.usage.outputTokens ?? 0,
      ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    };
    const { costUsd, priced } = computeCost(this.prices, this.modelId, usage);
    const responseModelId = result.response?.modelId;
    return {
      text: result.text,
      ...(result.reasoningText ? { reasoningText: result.reasoningText } : {}),
      usage,
      latencyMs: this.now() - startedAt,
      costUsd,
      priced,
      provider: this.provider,
      modelId: this.modelId,
      ...(responseModelId && responseModelId !== this.modelId ? { responseModelId } : {}),
      finishReason: result.finishReason,
      attempts: attempt,
      failedAttempts,
      warnings: (result.warnings ?? []).map((warning) => JSON.stringify(warning)),
    };
  }

  private recordAttempt(attempt: number, failure: ClassifiedFailure, durationMs: number, waitedMs: number) {
    return {
      attempt,
      reason: failure.reason,
      ...(failure.statusCode === undefined ? {} : { statusCode: failure.statusCode }),
      isRetryable: failure.isRetryable,
      message: failure.reason === 'timeout' && !failure.statusCode ? this.timeoutMessage() : failure.message,
      durationMs,
      waitedMs,
    } satisfies FailedAttempt;
  }

  private timeoutMessage(): string {
    return `no answer within the time-out of ${this.timeoutMs / 1000} s`;
  }

  private callError(failure: ClassifiedFailure, attempts: number, failedAttempts: FailedAttempt[], startedAt: number, cause: unknown): ModelCallError {
    const last = failedAttempts.at(-1);
    const detail = failure.reason === 'aborted' ? failure.message : (last?.message ?? failure.message);
    const ending = failure.isRetryable ? `gave up after ${attempts} attempt(s)` : `not retryable, ${attempts} attempt(s)`;
    return new ModelCallError(`${this.provider} model ${this.modelId}: ${detail} (${ending})`, {
      provider: this.provider,
      modelId: this.modelId,
      reason: failure.reason,
      ...(failure.statusCode === undefined ? {} : { statusCode: failure.statusCode }),
      isRetryable: failure.isRetryable,
      attempts,
      failedAttempts,
      elapsedMs: this.now() - startedAt,
      cause,
    });
  }
}

/**
 * Leading system messages become the SDK's `system` option (the form every provider accepts);
 * later ones stay in place.
 */
function splitSystemPrompt(messages: ChatMessage[]): { system?: string; messages: ModelMessage[] } {
  let firstOther = 0;
  while (firstOther < messages.length && messages[firstOther]?.role === 'system') firstOther++;
  const system = messages
    .slice(0, firstOther)
    .map((message) => message.content)
    .join('\n\n');
  const rest = messages.slice(firstOther).map((message) => ({ role: message.role, content: message.content }));
  return { ...(firstOther > 0 ? { system } : {}), messages: rest as ModelMessage[] };
}

/**
 * Like `AbortSignal.timeout`, but its timer keeps the process alive: a call that hangs must end
 * in a time-out error, never in the event loop running dry.
 */
function startTimeout(durationMs: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${durationMs} ms`, 'TimeoutError')), durationMs);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
