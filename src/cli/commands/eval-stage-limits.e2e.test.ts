import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema } from '../../core/verdict.js';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';
import { STAGE_LIMIT_FLOORS_MS } from '../../eval/run/sized-stage-limits.js';

/**
 * A candidate that hangs, evaluated by the built `kforge eval` with the real worker, as a user
 * would: its verdict comes at a limit sized by the reference's own measured time (here the floor,
 * since the reference's trials take milliseconds), not at the old fixed 300 s, and the verdict says
 * what the limit was and why. A `--timeout-correctness` the user gives wins.
 */
const skip = torchUnavailable();
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-stage-limits-'));
after(() => rmSync(root, { recursive: true, force: true }));

function kforgeEval(flags: string[]) {
  const args = ['eval', fixturePath('problems', 'scale-add.py'), fixturePath('candidates', 'hangs-in-forward.py'), '--backend', 'cpu', '--no-timing', '--json'];
  return execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), ...args, ...flags], {
    reject: false,
    cwd: root,
    timeout: 240_000,
    env: { KFORGE_PYTHON: TORCH_PYTHON, KFORGE_CACHE_DIR: path.join(root, 'cache'), TMPDIR: root, NO_COLOR: '1' },
  });
}

describe('kforge eval: stage limits that follow the problem (cpu backend, real worker)', { skip }, () => {
  it("gives a hung candidate its timeout at the limit the reference's pace sets, and says so", { timeout: 300_000 }, async () => {
    const started = performance.now();
    const run = await kforgeEval([]);
    const elapsedMs = performance.now() - started;
    assert.equal(run.exitCode, 1, String(run.stderr));
    const result = evaluationResultSchema.parse(JSON.parse(String(run.stdout)));
    assert.equal(result.verdict, 'timeout');
    assert.equal(result.reasons[0]?.check, 'timeout-correctness');
    const floorSeconds = STAGE_LIMIT_FLOORS_MS.correctness / 1000;
    assert.match(
      result.reasons[0]?.message ?? '',
      new RegExp(
        `the correctness stage ran past its limit of ${floorSeconds} s \\(5 × the reference's own time \\([\\d.]+ s a trial\\) for the stage's 6 trials, at least ${floorSeconds} s; the judge's time is not counted\\) and was killed; if it is only slow, raise the limit with --timeout-correctness$`,
      ),
    );
    const limits = result.stage_limits;
    assert.ok(limits && limits.reference_trial_ms !== null && limits.reference_trial_ms > 0, JSON.stringify(limits));
    assert.deepEqual(limits.stages.correctness, { limit_ms: STAGE_LIMIT_FLOORS_MS.correctness, source: 'reference', trials: 6 });
    // The old fixed limit was 300 s: the verdict now comes at the floor plus the workers' start.
    assert.ok(elapsedMs < STAGE_LIMIT_FLOORS_MS.correctness + 90_000, `took ${Math.round(elapsedMs / 1000)} s`);
  });

  it('keeps the limit the user gave', { timeout: 120_000 }, async () => {
    const run = await kforgeEval(['--timeout-correctness', '4']);
    const result = evaluationResultSchema.parse(JSON.parse(String(run.stdout)));
    assert.equal(result.verdict, 'timeout');
    assert.deepEqual(result.stage_limits?.stages.correctness, { limit_ms: 4000, source: 'flag' });
    assert.match(result.reasons[0]?.message ?? '', /past its limit of 4 s \(set by --timeout-correctness; the judge's time is not counted\)/);
  });
});
