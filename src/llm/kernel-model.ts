import { z } from 'zod';
import type { ReasoningEffort } from '../core/config.js';

/**
 * The language-model interface of kforge, version 1. A `KernelModel` turns a conversation into one
 * reply; it knows nothing of kernels, searches or evaluators. Implementations are named by their
 * technology: `AiSdkKernelModel` (any AI SDK provider), `FilesKernelModel` (a folder of files).
 *
 * Failures are typed: a provider that cannot answer throws `ModelCallError` (after its own
 * retries), a replay that has run out throws `ModelExhaustedError`. Both carry `isRetryable`.
 */
export interface KernelModel {
  /** Generates one reply to the conversation. */
  generate(request: KernelModelRequest): Promise<ModelReply>;
  /** Which provider and model this is, for records. Never includes credentials. */
  describe(): ModelDescription;
}

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

/** One message of a conversation, plain text only. */
export const chatMessageSchema = z.object({
  role: z.enum(CHAT_ROLES),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export { REASONING_EFFORTS, reasoningEffortSchema, type ReasoningEffort } from '../core/config.js';

/** What a caller asks of a model. Unset settings fall back to the model's configured defaults. */
export interface KernelModelRequest {
  messages: ChatMessage[];
  /** Sampling temperature; the range depends on the provider (usually 0 to 2). */
  temperature?: number;
  /** Upper bound on generated tokens, reasoning tokens included where the provider counts them so. */
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
  /** Cancels the call (and any wait between retries). A cancelled call is not retried. */
  signal?: AbortSignal;
}

/** The finish reasons of the AI SDK, shared by every implementation. */
export const FINISH_REASONS = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** Tokens counted by the provider for one call. Unreported counts are 0. */
export interface TokenUsage {
  inputTokens: number;
  /** Generated tokens, reasoning tokens included (every supported provider bills them as output). */
  outputTokens: number;
  /** The part of `outputTokens` spent on reasoning, where the provider reports it. */
  reasoningTokens?: number;
}

/** Why an attempt failed, in a form that can be stored (no credentials, no stack). */
export const FAILURE_REASONS = ['rate-limited', 'server-error', 'timeout', 'network', 'aborted', 'client-error', 'invalid-response', 'unknown'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** One attempt that failed before the call succeeded or gave up. */
export interface FailedAttempt {
  /** 1-based attempt number. */
  attempt: number;
  reason: FailureReason;
  statusCode?: number;
  isRetryable: boolean;
  /** Redacted one-line message. */
  message: string;
  /** How long the attempt ran, in milliseconds. */
  durationMs: number;
  /** How long the model waited before the next attempt, in milliseconds (0 when none followed). */
  waitedMs: number;
}

/** One reply of a model, with what it cost. */
export interface ModelReply {
  /** The reply's text, without reasoning. */
  text: string;
  /** The model's reasoning (thinking) text, where the provider returns it. */
  reasoningText?: string;
  usage: TokenUsage;
  /** Wall time of the whole `generate()` call in milliseconds, retries and waits included. */
  latencyMs: number;
  /** Cost in US dollars from the price table; 0 when the model is not priced. */
  costUsd: number;
  /** Whether the price table knew the model (false: `costUsd` is 0 because the price is unknown). */
  priced: boolean;
  /** Provider name as configured (`openai`, `vllm`, `files`, …). */
  provider: string;
  /** Model id as requested. */
  modelId: string;
  /** Model id the server reported, when it differs from the one requested. */
  responseModelId?: string;
  finishReason: FinishReason;
  /** Attempts made, the successful one included (1 when nothing was retried). */
  attempts: number;
  /** The attempts that failed before the successful one. */
  failedAttempts: FailedAttempt[];
  /** Provider warnings (unsupported settings and the like), one line each. */
  warnings: string[];
  /** For replays: the file this reply came from. */
  sourceFile?: string;
}

/** Identifies a model in records. */
export interface ModelDescription {
  provider: string;
  modelId: string;
}
