import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeCost, createPriceTable, DEFAULT_PRICES, lookupPrice } from './price-table.js';

describe('price table', () => {
  it('prices a known model per million tokens', () => {
    const cost = computeCost(DEFAULT_PRICES, 'claude-sonnet-4-5', { inputTokens: 200_000, outputTokens: 10_000 });
    assert.equal(cost.priced, true);
    assert.ok(Math.abs(cost.costUsd - (0.2 * 3 + 0.01 * 15)) < 1e-12);
  });

  it('finds snapshot and vendor-prefixed ids, but never a looser match', () => {
    assert.equal(lookupPrice(DEFAULT_PRICES, 'gpt-4o-2024-08-06'), DEFAULT_PRICES['gpt-4o']);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'claude-sonnet-4-20250514'), DEFAULT_PRICES['claude-sonnet-4']);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'anthropic/claude-opus-4-1'), DEFAULT_PRICES['claude-opus-4-1']);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'models/gemini-2.5-pro'), DEFAULT_PRICES['gemini-2.5-pro']);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'gpt-4o-mini'), DEFAULT_PRICES['gpt-4o-mini']);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'o3-mini'), undefined);
    assert.equal(lookupPrice(DEFAULT_PRICES, 'toString'), undefined);
  });

  it('costs an unknown model 0, marked unpriced', () => {
    assert.deepEqual(computeCost(DEFAULT_PRICES, 'Qwen/Qwen3-32B', { inputTokens: 5, outputTokens: 5 }), {
      costUsd: 0,
      priced: false,
    });
  });

  it('lets overrides replace defaults and add models', () => {
    const table = createPriceTable({
      'gpt-4o': { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 },
      'Qwen/Qwen3-32B': { inputUsdPerMillionTokens: 0.1, outputUsdPerMillionTokens: 0.2 },
    });
    assert.equal(computeCost(table, 'gpt-4o', { inputTokens: 1e6, outputTokens: 1e6 }).costUsd, 2);
    assert.ok(Math.abs(computeCost(table, 'Qwen/Qwen3-32B', { inputTokens: 1e6, outputTokens: 1e6 }).costUsd - 0.3) < 1e-12);
    assert.equal(DEFAULT_PRICES['gpt-4o']?.inputUsdPerMillionTokens, 2.5, 'defaults are not mutated');
  });
});
