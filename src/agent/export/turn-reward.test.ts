import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_REWARD_SHAPING, resolveRewardShaping } from '../../core/reward-shaping-schema.js';
import { correct, incorrect } from '../../../test-support/seeded-store/seed-results.js';
import { turnReward } from './turn-reward.js';

const fast = correct('cpu', { medianMs: 1, eagerMs: 4, compileMs: 2 });
const wrong = incorrect('cpu', { maxAbsError: 1, maxRelError: 1, mismatched: 1, numel: 8, message: 'off' });

test("an evaluated candidate is scored by the reward API's shaping", () => {
  assert.equal(turnReward({ replied: true, hasCandidate: true, result: fast }, DEFAULT_REWARD_SHAPING)?.reward, 1, 'log2 of 2x over the best baseline');
  assert.equal(turnReward({ replied: true, hasCandidate: true, result: fast }, resolveRewardShaping('tiered'))?.reward, 3);
  assert.equal(turnReward({ replied: true, hasCandidate: true, result: wrong }, DEFAULT_REWARD_SHAPING)?.reward, -1);
});

test('a reply without code takes the invalid_input penalty; what cannot be scored is null', () => {
  const shaping = resolveRewardShaping({ name: 'log-speedup', params: { penalties: { invalid_input: -2 } } });
  assert.deepEqual(turnReward({ replied: true, hasCandidate: false, result: null }, shaping), {
    reward: -2,
    explanation: 'no candidate in the reply: scored as invalid input, -2',
  });
  assert.equal(turnReward({ replied: false, hasCandidate: false, result: null }, DEFAULT_REWARD_SHAPING), null, 'a failed call');
  assert.equal(turnReward({ replied: true, hasCandidate: true, result: null }, DEFAULT_REWARD_SHAPING), null, 'not yet evaluated');
});
