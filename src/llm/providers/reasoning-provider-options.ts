import type { JSONValue } from 'ai';
import type { ReasoningEffort } from '../kernel-model.js';
import type { ProviderFamily } from './provider-presets.js';

/** Provider options in the AI SDK's shape: one object per provider key. */
export type ProviderOptions = Record<string, Record<string, JSONValue>>;

/**
 * Thinking budgets in tokens for the providers that take a budget rather than an effort level
 * (Anthropic extended thinking, Google thinkingConfig). Anthropic requires at least 1024; the
 * Anthropic provider adds the budget to `maxOutputTokens` and clamps to the model's limit.
 */
export const THINKING_BUDGET_TOKENS: Readonly<Record<ReasoningEffort, number>> = {
  low: 4096,
  medium: 12288,
  high: 24576,
};

/**
 * Maps kforge's reasoning effort to each provider's own setting:
 *
 * - `openai`: `reasoningEffort` (and `reasoningSummary: 'auto'` so the reasoning summary is returned);
 * - `anthropic`: extended thinking with a token budget;
 * - `google`: `thinkingConfig` with a token budget and `includeThoughts`;
 * - `openai-compatible`: `reasoning_effort` in the request body (vLLM, SGLang, DeepSeek, OpenRouter
 *   read it; servers that do not know it ignore it).
 *
 * @returns undefined when no effort is asked for: the provider's default applies.
 */
export function reasoningProviderOptions(family: ProviderFamily, effort: ReasoningEffort | undefined): ProviderOptions | undefined {
  if (effort === undefined) return undefined;
  switch (family) {
    case 'openai':
      return { openai: { reasoningEffort: effort, reasoningSummary: 'auto' } };
    case 'anthropic':
      return { anthropic: { thinking: { type: 'enabled', budgetTokens: THINKING_BUDGET_TOKENS[effort] } } };
    case 'google':
      return {
        google: { thinkingConfig: { thinkingBudget: THINKING_BUDGET_TOKENS[effort], includeThoughts: true } },
      };
    case 'openai-compatible':
      return { openaiCompatible: { reasoningEffort: effort } };
  }
}
