import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveEvaluationSettings } from './evaluation-settings.js';
import { limitBasis, referenceTrialMs, sizedStageLimits, STAGE_LIMIT_FLOORS_MS } from './sized-stage-limits.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from './stage-limits.js';

const request = { problemPath: 'p.py', candidatePath: 'c.py', backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' } as const;

describe('stage limits sized by the reference', () => {
  it('takes the slowest trial the reference reported, or none', () => {
    const trial = { seed: 1, input_digest: 'x', output: 'y' };
    assert.equal(
      referenceTrialMs({
        v: 1,
        type: 'reference-ready',
        trials: [
          { ...trial, trial_ms: 2000 },
          { ...trial, trial_ms: 2600 },
        ],
      }),
      2600,
    );
    assert.equal(referenceTrialMs({ v: 1, type: 'reference-ready', trials: [trial] }), null);
  });

  it('gives the candidate five times the reference for its trials, with floors, and the judge only more', () => {
    const settings = resolveEvaluationSettings(request);
    const { stagesMs, limits } = sizedStageLimits(settings, 2600);
    // A warm call and five trials at 2.6 s: 5 × 6 × 2.6 s.
    assert.equal(stagesMs.correctness, 78_000);
    assert.deepEqual(limits.correctness, { limit_ms: 78_000, source: 'reference', trials: 6 });
    // Fifteen trials' worth beside the 30 s budget.
    assert.equal(stagesMs.timing, 30_000 + 5 * 15 * 2600);
    assert.equal(stagesMs.load, STAGE_LIMIT_FLOORS_MS.load, 'one trial is under the floor');
    assert.equal(sizedStageLimits(settings, 2612).stagesMs.correctness, 79_000, 'whole seconds, rounded up');
    assert.equal(stagesMs.judge, DEFAULT_STAGE_TIMEOUTS_SECONDS.judge * 1000, 'the judge never gets less than its default');
    assert.equal(stagesMs.build, DEFAULT_STAGE_TIMEOUTS_SECONDS.build * 1000);
    assert.deepEqual(limits.build, { limit_ms: 600_000, source: 'default' });
  });

  it('grows past the old fixed limits where the reference itself is slow', () => {
    const { stagesMs } = sizedStageLimits(resolveEvaluationSettings({ ...request, shapes: true }), 60_000);
    assert.equal(stagesMs.correctness, 5 * (6 + 2.5) * 60_000, '--shapes adds the generalisation trials');
    assert.equal(stagesMs.judge, 5 * 6 * 60_000);
  });

  it('keeps a limit the user set, and the defaults when nothing was measured', () => {
    const settings = resolveEvaluationSettings({ ...request, timeoutsSeconds: { correctness: 1000, build: 30 } });
    const { stagesMs, limits } = sizedStageLimits(settings, 2600);
    assert.equal(stagesMs.correctness, 1_000_000);
    assert.deepEqual(limits.correctness, { limit_ms: 1_000_000, source: 'flag' });
    assert.equal(limits.build?.source, 'flag');
    const unmeasured = sizedStageLimits(resolveEvaluationSettings(request), null);
    assert.equal(unmeasured.stagesMs.correctness, DEFAULT_STAGE_TIMEOUTS_SECONDS.correctness * 1000);
    assert.equal(unmeasured.limits.correctness?.source, 'default');
  });

  it('says how a limit was chosen', () => {
    const { limits } = sizedStageLimits(resolveEvaluationSettings(request), 2600);
    assert.equal(
      limitBasis('correctness', limits.correctness, 2600, '--timeout-correctness'),
      "5 × the reference's own time (2.6 s a trial) for the stage's 6 trials, at least 60 s",
    );
    assert.equal(limitBasis('correctness', { limit_ms: 1000, source: 'flag' }, 2600, '--timeout-correctness'), 'set by --timeout-correctness');
    assert.equal(limitBasis('build', { limit_ms: 600_000, source: 'default' }, 2600, '--timeout-build'), 'the default; --timeout-build sets it');
  });
});
