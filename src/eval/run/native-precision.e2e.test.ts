import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { evaluationResultSchema, type EvaluationResult, type ToleranceProfile } from '../../core/verdict.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { FileBaselineCache } from '../cache/file-baseline-cache.js';
import { PythonEvaluator } from './python-evaluator.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * `--precision native` end to end through the real worker: a bf16 problem that declares its own
 * tolerance (KFORGE_TOLERANCE), judged by it under `kernelbench` and by the profile under `strict`
 * (docs/spec.md section 4). Needs a Python with torch: KFORGE_PYTHON, else /usr/bin/python3.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-native-'));
after(() => rmSync(root, { recursive: true, force: true }));

const evaluator = new PythonEvaluator({
  workerDirectory: WORKER_DIRECTORY,
  python: TORCH_PYTHON,
  baselineCache: new FileBaselineCache({ directory: path.join(root, 'baselines') }),
  terminationGraceMs: 500,
});

async function evaluate(tolerance: ToleranceProfile): Promise<EvaluationResult> {
  const { result } = await evaluator.evaluate({
    problemPath: fixturePath('problems', 'scale-bf16-declared.py'),
    candidatePath: fixturePath('candidates', 'scale-bf16-off.py'),
    backend: 'cpu',
    precision: 'native',
    tolerance,
    trials: 3,
    skipTiming: true,
    guardPolicy: 'pytorch',
  });
  const valid = evaluationResultSchema.safeParse(result);
  assert.ok(valid.success, valid.success ? '' : JSON.stringify(valid.error.issues));
  return result;
}

describe('--precision native with a tolerance the problem declares', { skip: torchUnavailable() }, () => {
  it('kernelbench: the declared bf16 tolerance judges, and the verdict says it came from the problem', async () => {
    const result = await evaluate('kernelbench');
    assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
    const correctness = result.correctness!;
    assert.deepEqual(
      [correctness.atol, correctness.rtol, correctness.tolerance, correctness.tolerance_source, correctness.tolerance_dtype],
      [0.1, 0.1, 'kernelbench', 'problem', 'bfloat16'],
    );
    assert.ok((correctness.max_abs_error ?? 0) > 0.01, 'outside the profile, inside the declaration');
    assert.equal(correctness.high_precision_dtype, 'float64');
    assert.ok(correctness.fp64?.max_abs_error, 'the error against float64 is reported beside it');
  });

  it('strict: its own values, so the same output is incorrect', async () => {
    const result = await evaluate('strict');
    assert.equal(result.verdict, 'incorrect', JSON.stringify(result.reasons));
    assert.equal(result.reasons[0]?.check, 'mismatch');
    const correctness = result.correctness!;
    assert.deepEqual([correctness.atol, correctness.tolerance_source, correctness.tolerance_dtype], [0.01, 'profile', 'bfloat16']);
  });
});
