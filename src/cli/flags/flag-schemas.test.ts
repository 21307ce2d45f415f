import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { choiceFlag, guardPolicyFlag, integerFlag, nonNegativeNumberFlag, positiveNumberFlag } from './flag-schemas.js';

const parsed = (
  schema: { safeParse: (value: unknown) => { success: boolean; data?: unknown; error?: { issues: Array<{ message: string }> } } },
  text: string,
) => {
  const result = schema.safeParse(text);
  return result.success ? result.data : result.error?.issues[0]?.message;
};

describe('command-line number flags', () => {
  it('read integers as a person writes them and name the flag when they are not', () => {
    const trials = integerFlag('--trials');
    assert.deepEqual(
      ['5', '+5', ' 7 ', '007'].map((text) => parsed(trials, text)),
      [5, 5, 7, 7],
    );
    for (const text of ['0', '-3', '2.5', '1e3', '0x10', '', 'five', '9007199254740993']) {
      assert.equal(parsed(trials, text), `expected \`--trials\` to be a positive integer, got \`${text}\``);
    }
    assert.equal(parsed(integerFlag('--warmup', 0), '0'), 0);
    assert.equal(parsed(integerFlag('--warmup', 0), '-1'), 'expected `--warmup` to be a non-negative integer, got `-1`');
  });

  it('read decimal numbers, refusing exponents, hex, minus signs and infinities', () => {
    const budget = positiveNumberFlag('--timing-budget', 'seconds');
    assert.deepEqual(
      ['2', '+2', '2.5', '.5', '3.'].map((text) => parsed(budget, text)),
      [2, 2, 2.5, 0.5, 3],
    );
    for (const text of ['0', '0.0', '-1', '1e3', '0x10', 'Infinity', '', ' ', 'two']) {
      assert.equal(parsed(budget, text), `expected \`--timing-budget\` to be a positive number of seconds, got \`${text}\``);
    }
    const warmup = nonNegativeNumberFlag('--warmup-ms', 'milliseconds');
    assert.deepEqual(
      ['0', '250', '0.5'].map((text) => parsed(warmup, text)),
      [0, 250, 0.5],
    );
    assert.equal(parsed(warmup, '-0.5'), 'expected `--warmup-ms` to be a non-negative number of milliseconds, got `-0.5`');
  });
});

describe('command-line choice flags', () => {
  it('take one of the values and name the closest for a typo', () => {
    const provider = choiceFlag('--provider', ['openai', 'anthropic', 'files'] as const);
    assert.equal(parsed(provider, 'files'), 'files');
    assert.equal(parsed(provider, 'fle'), 'expected `--provider` to be one of openai, anthropic, files, got `fle` (did you mean --provider files?)');
    assert.equal(parsed(provider, 'mistral'), 'expected `--provider` to be one of openai, anthropic, files, got `mistral`');
  });

  it('resolve a guard policy or its alias, and name the closest policy for a typo', () => {
    const policy = guardPolicyFlag('--guard-policy');
    assert.equal(parsed(policy, 'pytorch'), 'pytorch');
    assert.equal(parsed(policy, 'default'), 'own-kernels');
    assert.equal(
      parsed(policy, 'pytorc'),
      'expected `--guard-policy` to be one of kernelbench, own-kernels, strict, permissive, pytorch, got `pytorc` (did you mean --guard-policy pytorch?)',
    );
  });
});
