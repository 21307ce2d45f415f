import type { TokenUsage } from '../kernel-model.js';

/** Price of one model in US dollars per million tokens. */
export interface ModelPrice {
  inputUsdPerMillionTokens: number;
  outputUsdPerMillionTokens: number;
}

/** Prices by model id. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

const price = (input: number, output: number): ModelPrice => ({
  inputUsdPerMillionTokens: input,
  outputUsdPerMillionTokens: output,
});

/**
 * Default list prices, USD per million tokens, standard tier, uncached input, as published by the
 * vendors around September 2025. They are defaults to override (`prices` in kforge.config.json),
 * not a billing source: prices change, and cached input, batch and long-context tiers are not
 * modelled. Models served locally (vLLM, SGLang, Ollama, llama.cpp) have no price; give them one
 * in the config to count GPU time.
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-5': price(1.25, 10),
  'gpt-5-mini': price(0.25, 2),
  'gpt-5-nano': price(0.05, 0.4),
  'gpt-4.1': price(2, 8),
  'gpt-4.1-mini': price(0.4, 1.6),
  'gpt-4o': price(2.5, 10),
  'gpt-4o-mini': price(0.15, 0.6),
  o3: price(2, 8),
  'o4-mini': price(1.1, 4.4),
  'claude-opus-4-1': price(15, 75),
  'claude-opus-4': price(15, 75),
  'claude-sonnet-4-5': price(3, 15),
  'claude-sonnet-4': price(3, 15),
  'claude-3-5-haiku': price(0.8, 4),
  'gemini-2.5-pro': price(1.25, 10),
  'gemini-2.5-flash': price(0.3, 2.5),
};

/** The default prices with the configured overrides on top. */
export function createPriceTable(overrides: Readonly<Record<string, ModelPrice>> = {}): PriceTable {
  return { ...DEFAULT_PRICES, ...overrides };
}

/**
 * Finds a model's price: the exact id first, then the id without a snapshot date
 * (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`, `-latest`), then without a vendor prefix
 * (`anthropic/claude-sonnet-4` on OpenRouter, `models/gemini-2.5-pro`). Never a looser match:
 * `o3-mini` is not priced as `o3`.
 */
export function lookupPrice(table: PriceTable, modelId: string): ModelPrice | undefined {
  const withoutVendor = modelId.includes('/') ? modelId.slice(modelId.lastIndexOf('/') + 1) : modelId;
  const candidates = [modelId, withoutSnapshot(modelId), withoutVendor, withoutSnapshot(withoutVendor)];
  for (const candidate of candidates) {
    if (Object.hasOwn(table, candidate)) return table[candidate];
  }
  return undefined;
}

function withoutSnapshot(modelId: string): string {
  return modelId.replace(/(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-latest)$/, '');
}

/** The cost of one call, and whether the model had a price at all. */
export interface CallCost {
  costUsd: number;
  priced: boolean;
}

/**
 * Cost of one call: input tokens at the input price plus output tokens (reasoning included) at
 * the output price. An unknown model costs 0 with `priced: false`.
 */
export function computeCost(table: PriceTable, modelId: string, usage: TokenUsage): CallCost {
  const found = lookupPrice(table, modelId);
  if (!found) return { costUsd: 0, priced: false };
  const costUsd = (usage.inputTokens * found.inputUsdPerMillionTokens + usage.outputTokens * found.outputUsdPerMillionTokens) / 1_000_000;
  return { costUsd, priced: true };
}
