import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAILURE_VERDICTS, highestReward, lowestCorrectReward, resolveRewardShaping, type RewardShaping } from './reward-shaping-schema.js';
import { shapeReward } from './reward-shaping.js';
import type { CorrectResult, EvaluationResult, TimingStats, Verdict } from './verdict.js';

const stats = (median: number): TimingStats => ({ median, mean: median, std: 0, min: median, max: median, ci95: [median, median], n: 10 });

/** A result: `correct` with the given medians (ms), or any other verdict without timing. */
function result(verdict: Verdict, timing?: { candidate: number; eager: number; compile?: number | null; shareOfBound?: number }): EvaluationResult {
  const common = {
    reasons: [],
    problem: 'p.py',
    candidate: 'c.py',
    backend: 'cpu' as const,
    precision: 'fp32' as const,
    diagnostics: { stdout: '', stderr: '' },
    environment: null,
  };
  if (verdict !== 'correct') return { verdict, ...common };
  const base: CorrectResult = { verdict, ...common, correctness: { trials: 5, passed: 5, max_abs_error: 0, max_rel_error: 0 } };
  if (!timing) return base;
  const compile = timing.compile ?? null;
  const vsEager = timing.eager / timing.candidate;
  const vsCompile = compile === null ? null : compile / timing.candidate;
  const bound =
    timing.shareOfBound === undefined
      ? null
      : { bytes: 1, flops: 1, lower_bound_ms: timing.candidate * timing.shareOfBound, share_of_bound: timing.shareOfBound };
  return {
    ...base,
    timing: {
      candidate_ms: stats(timing.candidate),
      eager_ms: stats(timing.eager),
      compile_ms: compile === null ? null : stats(compile),
      ...(compile === null ? { compile_unavailable: 'torch 1.13 has no torch.compile' } : {}),
      speedup_vs_eager: vsEager,
      speedup_vs_compile: vsCompile,
      speedup_vs_best: vsCompile === null ? vsEager : Math.min(vsEager, vsCompile),
    },
    ...(bound === null
      ? {}
      : { guard: { policy: 'kernelbench', findings: [], checks: [], audit: null, speed_of_light: bound, generalisation: null, notes: [] } }),
  };
}

describe('binary', () => {
  it('is 1 for correct and the configured penalty otherwise', () => {
    const shaping = resolveRewardShaping('binary');
    assert.equal(shapeReward(result('correct', { candidate: 5, eager: 1 }), shaping).reward, 1);
    for (const verdict of FAILURE_VERDICTS) assert.equal(shapeReward(result(verdict), shaping).reward, 0, verdict);
    const signed = resolveRewardShaping({ name: 'binary', params: { failure: -1, penalties: { rejected: -2 } } });
    assert.equal(shapeReward(result('incorrect'), signed).reward, -1);
    assert.equal(shapeReward(result('rejected'), signed).reward, -2);
  });
});

describe('tiered', () => {
  const shaping = resolveRewardShaping('tiered');

  it('pays by the highest tier reached over the best baseline', () => {
    const at = (speedup: number) => shapeReward(result('correct', { candidate: 1, eager: speedup }), shaping);
    assert.deepEqual(
      [0.5, 0.999, 1, 1.49, 1.5, 2, 40].map((speedup) => at(speedup).reward),
      [0, 0, 1, 1, 2, 3, 3],
    );
    assert.deepEqual([at(0.5).tier, at(1.2).tier, at(2.5).tier], [null, 0, 2]);
  });

  it('uses the faster baseline for `best`, or the one asked for', () => {
    const timed = result('correct', { candidate: 1, eager: 2.5, compile: 1.2 });
    assert.equal(shapeReward(timed, shaping).reward, 1, 'best: 1.2x over compile');
    assert.equal(shapeReward(timed, resolveRewardShaping({ name: 'tiered', params: { baseline: 'eager' } })).reward, 3, '2.5x over eager');
  });

  it('takes configured tiers, slower reward and penalties', () => {
    const custom = resolveRewardShaping({
      name: 'tiered',
      params: {
        tiers: [
          { speedup: 1.1, reward: 0.5 },
          { speedup: 4, reward: 1 },
        ],
        slower: 0.1,
        penalties: { compile_error: -0.2, rejected: -5 },
      },
    });
    assert.equal(shapeReward(result('correct', { candidate: 1, eager: 1.05 }), custom).reward, 0.1);
    assert.equal(shapeReward(result('correct', { candidate: 1, eager: 3 }), custom).reward, 0.5);
    assert.equal(shapeReward(result('compile_error'), custom).reward, -0.2);
    assert.equal(shapeReward(result('rejected'), custom).reward, -5);
    assert.equal(shapeReward(result('timeout'), custom).reward, -1);
  });
});

describe('log-speedup', () => {
  const shaping = resolveRewardShaping('log-speedup');

  it('is clamp(log2(speedup), lo, hi) for correct candidates and -1 for failures', () => {
    const at = (speedup: number) => shapeReward(result('correct', { candidate: 1, eager: speedup }), shaping).reward;
    assert.equal(at(1), 0);
    assert.equal(at(2), 1);
    assert.ok(Math.abs(at(1.5) - Math.log2(1.5)) < 1e-12);
    assert.equal(at(0.1), -0.5, 'floored at lo');
    assert.equal(at(1000), 3, 'capped at hi');
    assert.equal(shapeReward(result('incorrect'), shaping).reward, -1);
  });

  it('scores the compile baseline only where torch.compile was timed', () => {
    const compileShaping = resolveRewardShaping({ name: 'log-speedup', params: { baseline: 'compile' } });
    const withoutCompile = shapeReward(result('correct', { candidate: 1, eager: 4 }), compileShaping);
    assert.equal(withoutCompile.reward, 0, 'the correctness part only');
    assert.equal(withoutCompile.speedup, null);
    assert.match(withoutCompile.explanation, /torch 1\.13 has no torch\.compile/);
    assert.equal(shapeReward(result('correct', { candidate: 1, eager: 4, compile: 2 }), compileShaping).reward, 1);
  });
});

describe('every shaping', () => {
  const shapings: RewardShaping[] = [
    resolveRewardShaping('binary'),
    resolveRewardShaping('tiered'),
    resolveRewardShaping('log-speedup'),
    resolveRewardShaping({ name: 'log-speedup', params: { lo: 0.5, hi: 2 } }),
  ];

  it('gives a correct candidate without timing its correctness part only', () => {
    const untimed = result('correct');
    assert.deepEqual(
      shapings.map((shaping) => shapeReward(untimed, shaping).reward),
      [1, 0, 0, 0.5],
    );
    for (const shaping of shapings) assert.equal(shapeReward(untimed, shaping).speedReward, 0);
  });

  it('floors a time faster than the speed-of-light bound at the bound (docs/hacks.md #16)', () => {
    // 8x measured, but the bound says the candidate cannot be faster than 2x of its measured time.
    const implausible = shapeReward(result('correct', { candidate: 1, eager: 8, shareOfBound: 2 }), resolveRewardShaping('log-speedup'));
    assert.deepEqual([implausible.speedup, implausible.effectiveSpeedup, implausible.reward], [8, 4, 2]);
    assert.match(implausible.explanation, /floored at the speed-of-light bound/);
    const honest = shapeReward(result('correct', { candidate: 1, eager: 8, shareOfBound: 0.5 }), resolveRewardShaping('log-speedup'));
    assert.equal(honest.reward, 3);
  });

  it('never scores a failure at or above any correct candidate, nor anything above the highest reward', () => {
    for (const shaping of shapings) {
      const correctRewards = [0.01, 0.3, 0.9, 1, 1.7, 3, 100, 1e6].map(
        (speedup) => shapeReward(result('correct', { candidate: 1, eager: speedup }), shaping).reward,
      );
      const failureRewards = FAILURE_VERDICTS.map((verdict) => shapeReward(result(verdict), shaping).reward);
      assert.ok(Math.max(...failureRewards) < Math.min(...correctRewards), `${shaping.name}: ${failureRewards} vs ${correctRewards}`);
      assert.ok(Math.min(...correctRewards) >= lowestCorrectReward(shaping));
      assert.ok(Math.max(...correctRewards) <= highestReward(shaping));
    }
  });

  it('refuses parameters that would let a failure score as much as a correct candidate', () => {
    const refused: unknown[] = [
      { name: 'binary', params: { failure: 1 } },
      { name: 'binary', params: { correct: 0 } },
      { name: 'tiered', params: { slower: -1 } },
      { name: 'tiered', params: { penalties: { rejected: 0.5 } } },
      { name: 'log-speedup', params: { lo: -1 } },
      { name: 'log-speedup', params: { lo: 3, hi: 2 } },
      {
        name: 'tiered',
        params: {
          tiers: [
            { speedup: 2, reward: 1 },
            { speedup: 1.5, reward: 2 },
          ],
        },
      },
      {
        name: 'tiered',
        params: {
          tiers: [
            { speedup: 1, reward: 2 },
            { speedup: 2, reward: 1 },
          ],
        },
      },
      { name: 'tiered', params: { tier: [] } },
      { name: 'softmax' },
    ];
    for (const input of refused) assert.throws(() => resolveRewardShaping(input as never), Error, JSON.stringify(input));
  });
});
