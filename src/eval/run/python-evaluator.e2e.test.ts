import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import type { EvaluationRequest } from '../evaluator.js';
import { FileBaselineCache } from '../cache/file-baseline-cache.js';
import { PythonEvaluator } from './python-evaluator.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * End to end through the real worker (worker/kforge_worker) with pure-PyTorch problems and
 * candidates from test-support/fixtures. Needs a Python with torch: KFORGE_PYTHON, else
 * /usr/bin/python3.
 */
const PYTHON = TORCH_PYTHON;
const skip = torchUnavailable();

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));

const evaluator = new PythonEvaluator({
  workerDirectory: WORKER_DIRECTORY,
  python: PYTHON,
  baselineCache: new FileBaselineCache({ directory: path.join(root, 'baselines') }),
  terminationGraceMs: 500,
});

async function evaluate(candidate: string, overrides: Partial<EvaluationRequest> = {}): Promise<EvaluationResult> {
  const { result } = await evaluator.evaluate({
    problemPath: fixturePath('problems', 'scale-add.py'),
    candidatePath: fixturePath('candidates', `${candidate}.py`),
    backend: 'cpu',
    precision: 'fp32',
    tolerance: 'kernelbench',
    perfTrials: 20,
    warmupTrials: 2,
    // The fixtures are pure PyTorch: they exercise the evaluator's stages, not the guard, so the
    // `pytorch` policy records the static guard's findings and requires no kernel of their own.
    guardPolicy: 'pytorch',
    ...overrides,
  });
  const valid = evaluationResultSchema.safeParse(result);
  assert.ok(valid.success, valid.success ? '' : JSON.stringify(valid.error.issues));
  return result;
}

function reason(result: EvaluationResult): string {
  return `${result.verdict}: ${JSON.stringify(result.reasons)}`;
}

describe('PythonEvaluator with the real worker', { skip }, () => {
  it('correct: an honest candidate, timed against the eager baseline', async () => {
    const result = await evaluate('scale-add-correct');
    assert.equal(result.verdict, 'correct', reason(result));
    assert.equal(result.correctness?.passed, 5);
    assert.ok(result.correctness?.fp64, 'the float64 error profile is reported');
    assert.equal(result.timing?.candidate_ms.n, 20);
    assert.ok((result.timing?.eager_ms?.median ?? 0) > 0);
    assert.ok(result.timing?.speedup_vs_eager !== null);
    assert.ok(result.environment?.torch);
  });

  it('incorrect: a candidate that forgets the bias', async () => {
    const result = await evaluate('scale-add-incorrect', { skipTiming: true });
    assert.equal(result.verdict, 'incorrect', reason(result));
    assert.equal(result.reasons[0]?.check, 'mismatch');
    assert.match(result.reasons[0]?.message ?? '', /elements differ/);
    assert.ok((result.correctness?.max_abs_error ?? 0) > 0.01);
  });

  it('invalid_input: a syntax error, and a file without ModelNew', async () => {
    const syntax = await evaluate('syntax-error', { skipTiming: true });
    assert.equal(syntax.verdict, 'invalid_input', reason(syntax));
    assert.equal(syntax.reasons[0]?.check, 'candidate-load');
    assert.match(syntax.reasons[0]?.message ?? '', /syntax error at line 3/);
    const missing = await evaluate('no-model-new', { skipTiming: true });
    assert.equal(missing.verdict, 'invalid_input', reason(missing));
    assert.match(missing.reasons[0]?.message ?? '', /ModelNew/);
  });

  it('runtime_error: forward raises', async () => {
    const result = await evaluate('raises-in-forward', { skipTiming: true });
    assert.equal(result.verdict, 'runtime_error', reason(result));
    assert.equal(result.reasons[0]?.check, 'forward');
    assert.match(result.reasons[0]?.message ?? '', /ValueError: the kernel launch configuration is invalid/);
    assert.match(result.diagnostics.traceback ?? '', /raises-in-forward\.py/);
  });

  it('timeout: forward never returns', async () => {
    const result = await evaluate('hangs-in-forward', { skipTiming: true, timeoutsSeconds: { correctness: 3 } });
    assert.equal(result.verdict, 'timeout', reason(result));
    assert.equal(result.reasons[0]?.check, 'timeout-correctness');
  });

  it('crashed: forward dies of SIGSEGV', async () => {
    const result = await evaluate('segfaults-in-forward', { skipTiming: true });
    assert.equal(result.verdict, 'crashed', reason(result));
    assert.match(result.reasons[0]?.message ?? '', /SIGSEGV/);
  });

  it('rejected: input mutation, and different answers while timed', async () => {
    const mutation = await evaluate('mutates-input', { skipTiming: true });
    assert.equal(mutation.verdict, 'rejected', reason(mutation));
    assert.equal(mutation.reasons[0]?.check, 'input-mutation');
    const cheat = await evaluate('cheats-when-timed');
    assert.equal(cheat.verdict, 'rejected', reason(cheat));
    assert.equal(cheat.reasons[0]?.check, 'timed-output');
  });

  it('each output is judged as its call returned it: rewrites after the call and bytes slipped into the pipe change nothing', async () => {
    // The adversarial corpus's output-hand-over attacks (docs/hacks.md #19), with their own C++
    // kernels, under the default policy: the candidate runs in its sandbox and writes the hand-over
    // pipe the judge made in its read-only `in` folder.
    const corpus = (file: string) => ({
      problemPath: path.join(REPOSITORY_ROOT, 'tests', 'adversarial', 'problems', 'relu.py'),
      candidatePath: path.join(REPOSITORY_ROOT, 'tests', 'adversarial', 'cpu', file),
    });
    const rewrites = await evaluate('', { ...corpus('c19_rewrites_after_return.py'), guardPolicy: 'kernelbench' });
    assert.equal(rewrites.verdict, 'incorrect', reason(rewrites));
    assert.equal(rewrites.reasons[0]?.check, 'mismatch');
    const slipped = await evaluate('', { ...corpus('c19c_prefills_the_pipe.py'), guardPolicy: 'kernelbench', skipTiming: true });
    assert.equal(slipped.verdict, 'rejected', reason(slipped));
    assert.equal(slipped.reasons[0]?.check, 'handover');
    const honest = await evaluate('scale-add-correct');
    const handover = honest.guard?.checks.find((check) => check.check === 'handover');
    assert.ok(handover, 'the guard report says how the outputs travelled');
    assert.match(handover.message, /handed to the judge by pipe before the candidate went on/);
  });

  for (const policy of ['kernelbench', 'own-kernels'] as const) {
    it(`rejected under ${policy}: no native code, and PyTorch did the work (decided from what ran, with attribution)`, async () => {
      const result = await evaluate('scale-add-correct', { guardPolicy: policy, skipTiming: true });
      assert.equal(result.verdict, 'rejected', reason(result));
      assert.equal(result.reasons[0]?.check, 'torch-fallback', reason(result));
      const guard = result.guard as { policy: string; findings: Array<{ check: string; severity: string }> };
      assert.equal(guard.policy, policy);
      assert.ok(
        guard.findings.some((finding) => finding.check === 'torch-fallback'),
        'the static finding stays, with its line',
      );
      assert.ok(
        guard.findings.every((finding) => finding.severity === 'note'),
        'a static finding alone rejects nothing',
      );
      const attribution = result.attribution!;
      assert.equal(attribution.measured, 'host');
      assert.equal(attribution.own_share, 0, 'no native code: none of the time is in kernels of its own');
      // mul, add and clamp_min: the reference runs mul, add and relu (clamp_min's family).
      assert.ok(attribution.torch_ops.length > 0 && attribution.torch_ops.every((entry) => entry.in_reference === true), JSON.stringify(attribution));
      assert.deepEqual(attribution.substituted_ops, []);
    });
  }

  it('the former policy name `default` is judged as own-kernels and named so', async () => {
    const result = await evaluate('scale-add-correct', { guardPolicy: 'default', skipTiming: true });
    assert.equal((result.guard as { policy: string }).policy, 'own-kernels');
  });
});
