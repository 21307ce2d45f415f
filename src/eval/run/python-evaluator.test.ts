import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { evaluationResultSchema } from '../../core/verdict.js';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import type { EvaluationRequest } from '../evaluator.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { FileBaselineCache } from '../cache/file-baseline-cache.js';
import { PythonEvaluator, type PythonEvaluatorOptions } from './python-evaluator.js';
import { MachineFaultError } from '../machine-fault-error.js';

/**
 * PythonEvaluator against the fake worker of test-support/fixtures/fake-worker: real processes
 * speaking protocol v1 that act out one scenario each, so these tests need no torch.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-evaluator-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
function evaluator(overrides: Partial<PythonEvaluatorOptions> = {}): { evaluator: PythonEvaluator; scratchRoot: string } {
  counter += 1;
  const scratchRoot = path.join(root, `scratch-${counter}`);
  rmSync(scratchRoot, { recursive: true, force: true });
  mkdirSync(scratchRoot, { recursive: true });
  return {
    scratchRoot,
    evaluator: new PythonEvaluator({
      workerDirectory: fixturePath('fake-worker'),
      python: TEST_PYTHON,
      baselineCache: new FileBaselineCache({ directory: path.join(root, `cache-${counter}`) }),
      scratchRoot,
      terminationGraceMs: 200,
      ...overrides,
    }),
  };
}

function request(scenario: string, overrides: Partial<EvaluationRequest> = {}): EvaluationRequest {
  return {
    problemPath: fixturePath('fake-scenarios', 'problem.py'),
    candidatePath: fixturePath('fake-scenarios', `candidate-${scenario}.py`),
    backend: 'cpu',
    precision: 'fp32',
    tolerance: 'kernelbench',
    perfTrials: 20,
    ...overrides,
  };
}

describe('PythonEvaluator (fake worker)', () => {
  it('returns correct with timing statistics and speedups from raw times, and caches the baselines', async () => {
    const { evaluator: subject, scratchRoot } = evaluator();
    const { result } = await subject.evaluate(request('correct'));
    assert.ok(evaluationResultSchema.safeParse(result).success);
    assert.equal(result.verdict, 'correct');
    assert.deepEqual(result.reasons, []);
    assert.equal(result.correctness?.trials, 5);
    assert.equal(result.correctness?.passed, 5);
    assert.equal(result.timing?.candidate_ms.median, 1);
    assert.equal(result.timing?.candidate_ms.n, 20);
    assert.equal(result.timing?.speedup_vs_eager, 2);
    assert.equal(result.timing?.speedup_vs_compile, 4);
    assert.equal(result.timing?.speedup_vs_best, 2);
    assert.equal(result.timing?.baseline_cached, false);
    // One judge stage (2 ms in the fake) per handed-over output: 5 correctness trials and 6 kept timed and batch outputs.
    assert.deepEqual(result.stages, { reference: 3, baseline: 5, build: 40, load: 1, correctness: 4, judge: 22, timing: 6 });
    assert.equal(result.environment?.torch, '0.0-fake');
    assert.deepEqual(readdirSync(scratchRoot), [], 'the scratch directory is removed');

    const { result: again } = await subject.evaluate(request('correct'));
    assert.equal(again.timing?.baseline_cached, true);
    assert.equal(again.stages?.baseline, undefined, 'cached baselines are not measured again');
    const { result: refreshed } = await subject.evaluate(request('correct', { refreshBaselines: true }));
    assert.equal(refreshed.timing?.baseline_cached, false);
  });

  it('checks correctness only with skipTiming', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('correct', { skipTiming: true, trials: 2 }));
    assert.equal(result.verdict, 'correct');
    assert.equal(result.timing, undefined);
    assert.equal(result.correctness?.trials, 2);
    assert.equal(result.stages?.timing, undefined);
  });

  it('reports a mismatch as incorrect with a sentence a person can act on', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('incorrect'));
    assert.equal(result.verdict, 'incorrect');
    assert.equal(result.reasons.length, 1);
    assert.equal(result.reasons[0]?.check, 'mismatch');
    assert.match(result.reasons[0]?.message ?? '', /412 of 512 elements differ .* \(in all 5 trials; first seed \d+\)$/);
    assert.equal(result.correctness?.passed, 0);
    assert.equal(result.correctness?.max_abs_error, 0.53);
    assert.equal(result.correctness?.mismatch_count, 5 * 412);
    assert.equal(result.timing, undefined);
  });

  it('rejects input mutation', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('mutation'));
    assert.equal(result.verdict, 'rejected');
    assert.equal(result.reasons[0]?.check, 'input-mutation');
    assert.match(result.reasons[0]?.message ?? '', /trial 2 of 5/);
  });

  it('rejects a candidate whose timed outputs differ from the reference', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('timed-cheat'));
    assert.equal(result.verdict, 'rejected');
    assert.equal(result.reasons[0]?.check, 'timed-output');
    assert.match(result.reasons[0]?.message ?? '', /^timed call \d+ \(seed \d+\) returned a different answer/);
    assert.equal(result.timing, undefined, 'no timing for a result that is not correct');
  });

  it('keeps the compiler output and names a known cause', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('compile_error'));
    assert.equal(result.verdict, 'compile_error');
    assert.match(result.diagnostics.compiler ?? '', /ninja: build stopped/);
    assert.equal(result.diagnostics.first_error, "Unsupported gpu architecture 'sm_70'");
    assert.match(result.diagnostics.known_cause ?? '', /hard-codes -arch=sm_70/);
    assert.match(result.reasons[0]?.message ?? '', /remove the flag/);
  });

  it('kills a stage that runs past its limit: timeout', async () => {
    const started = Date.now();
    const { result } = await evaluator().evaluator.evaluate(request('hang-build', { timeoutsSeconds: { build: 1 } }));
    assert.equal(result.verdict, 'timeout');
    assert.equal(result.reasons[0]?.check, 'timeout-build');
    assert.match(result.reasons[0]?.message ?? '', /limit of 1 s .* --timeout-build/);
    assert.ok(Date.now() - started < 15_000);
  });

  it("sizes the candidate's stage limits by the reference's measured trials and reports them", async () => {
    const { result } = await evaluator().evaluator.evaluate(
      request('correct', { problemPath: fixturePath('fake-scenarios', 'problem-paced.py'), timeoutsSeconds: { timing: 50 } }),
    );
    assert.equal(result.verdict, 'correct');
    assert.equal(result.stage_limits?.reference_trial_ms, 20_000);
    // Five times the reference's 20 s for a warm call and five trials: past the old fixed 300 s.
    assert.deepEqual(result.stage_limits?.stages.correctness, { limit_ms: 600_000, source: 'reference', trials: 6 });
    assert.deepEqual(result.stage_limits?.stages.timing, { limit_ms: 50_000, source: 'flag' }, 'a limit the user set wins');
    assert.deepEqual(result.stage_limits?.stages.build, { limit_ms: 600_000, source: 'default' });
    const { result: unpaced } = await evaluator().evaluator.evaluate(request('correct'));
    assert.equal(unpaced.stage_limits?.reference_trial_ms, null, 'a worker that reports no pace keeps the defaults');
    assert.equal(unpaced.stage_limits?.stages.correctness?.source, 'default');
  });

  it("does not count the judge's time against the candidate's stage, which waits for it", async () => {
    // Five outputs judged for 1 s each while the candidate waits: 5 s, under a 2 s limit of the candidate's own time.
    const { result } = await evaluator().evaluator.evaluate(
      request('correct', { problemPath: fixturePath('fake-scenarios', 'problem-slow-judge.py'), skipTiming: true, timeoutsSeconds: { correctness: 2 } }),
    );
    assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
    const { result: slow } = await evaluator().evaluator.evaluate(request('slow-correctness', { skipTiming: true, timeoutsSeconds: { correctness: 2 } }));
    assert.equal(slow.verdict, 'timeout', "the candidate's own 8 s still count");
    assert.match(
      slow.reasons[0]?.message ?? '',
      /the correctness stage ran past its limit of 2 s \(set by --timeout-correctness; the judge's time is not counted\)/,
    );
  });

  it('reports death by signal as crashed, naming the signal and the stage', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('segfault'));
    assert.equal(result.verdict, 'crashed');
    assert.equal(result.reasons[0]?.check, 'crash');
    assert.match(result.reasons[0]?.message ?? '', /during the correctness stage of a segmentation fault \(SIGSEGV\)/);
  });

  it('turns garbage and out-of-order messages into crashed / protocol', async () => {
    const { result: garbage } = await evaluator().evaluator.evaluate(request('garbage'));
    assert.equal(garbage.verdict, 'crashed');
    assert.equal(garbage.reasons[0]?.check, 'protocol');
    assert.match(garbage.reasons[0]?.message ?? '', /not JSON: `I am not JSON`/);
    const { result: disorder } = await evaluator().evaluator.evaluate(request('out-of-order'));
    assert.equal(disorder.verdict, 'crashed');
    assert.match(disorder.reasons[0]?.message ?? '', /expected `build-info` or `correctness-outputs`, got `timing`/);
  });

  it('caps a flood of output and says how much was dropped', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('spam'));
    assert.equal(result.verdict, 'correct');
    assert.ok(result.diagnostics.stderr.length < 1024 * 1024 + 200);
    assert.match(result.diagnostics.stderr, /\[kforge: 2097152 more bytes were dropped past the 1 MiB limit\]/);
  });

  it('passes no API key or token to the candidate', async () => {
    const { evaluator: subject } = evaluator({
      environment: { ...process.env, OPENAI_API_KEY: 'sk-test-secret', HF_TOKEN: 'hf_secret', OMP_NUM_THREADS: '1' },
    });
    const { result } = await subject.evaluate(request('correct', { skipTiming: true }));
    const printed = JSON.parse(result.diagnostics.stdout.trim().split('\n')[0]!) as { environment: Record<string, string> };
    assert.equal(printed.environment.OPENAI_API_KEY, undefined);
    assert.equal(printed.environment.HF_TOKEN, undefined);
    assert.equal(printed.environment.OMP_NUM_THREADS, '1');
    assert.match(printed.environment.HOME ?? '', /kforge-/, 'HOME is inside the scratch directory');
  });

  it('blames the problem, not the candidate, when the reference fails or dies', async () => {
    const { result: invalid } = await evaluator().evaluator.evaluate(request('correct', { problemPath: fixturePath('fake-scenarios', 'problem-invalid.py') }));
    assert.equal(invalid.verdict, 'invalid_input');
    assert.equal(invalid.reasons[0]?.check, 'problem-load');
    // A reference that dies gives no verdict at all (the candidate never ran): a machine fault.
    await assert.rejects(
      evaluator().evaluator.evaluate(request('correct', { problemPath: fixturePath('fake-scenarios', 'problem-crash.py') })),
      (error: unknown) => {
        assert.ok(error instanceof MachineFaultError);
        assert.match(error.message, /^the reference process \(which never imports the candidate\) died during the reference stage/);
        return true;
      },
    );
  });

  it('returns invalid_input for a missing candidate file without starting workers', async () => {
    const { result } = await evaluator().evaluator.evaluate(request('correct', { candidatePath: '/nonexistent/candidate.py' }));
    assert.equal(result.verdict, 'invalid_input');
    assert.equal(result.reasons[0]?.check, 'candidate-load');
    assert.equal(result.environment, null);
  });

  it('throws a setup error when the worker package is missing', async () => {
    const { evaluator: subject } = evaluator({ workerDirectory: path.join(root, 'no-worker-here') });
    await assert.rejects(subject.evaluate(request('correct')), (error: unknown) => {
      assert.ok(error instanceof EvaluatorSetupError);
      assert.match(error.message, /No module named kforge_worker/);
      assert.match(error.hint ?? '', /kforge doctor/);
      return true;
    });
  });

  it('cancels through the AbortSignal', async () => {
    const controller = new AbortController();
    const { evaluator: subject, scratchRoot } = evaluator();
    setTimeout(() => controller.abort(), 1500);
    await assert.rejects(subject.evaluate(request('hang-build'), { signal: controller.signal }), EvaluationCancelledError);
    assert.deepEqual(readdirSync(scratchRoot), []);
  });

  it('keeps the scratch directory when asked', async () => {
    const { evaluator: subject, scratchRoot } = evaluator({ keepScratch: true });
    await subject.evaluate(request('correct', { skipTiming: true }));
    const kept = readdirSync(scratchRoot);
    assert.equal(kept.length, 1);
    assert.match(kept[0] ?? '', /^kforge-/);
    // The outputs were handed over, never saved: the kept scratch holds the staged inputs, the
    // hand-over pipe and the candidate's hand-over socket (bound by its launcher).
    assert.deepEqual(readdirSync(path.join(scratchRoot, kept[0]!, 'in')).sort(), ['candidate', 'handover', 'handover.sock', 'problem']);
  });
});
