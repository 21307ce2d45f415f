import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import picocolors from 'picocolors';
import type { EvaluationResult } from '../../core/verdict.js';
import type { ProblemFolderShape } from '../../eval/problem/problem-folder.js';
import { combineShapeResults } from '../../eval/problem/shape-sweep-result.js';
import { correctResult, runtimeErrorResult, incorrectResult } from '../../../test-support/fake-evaluator.js';
import { renderEvaluation } from './render-evaluation.js';

const PROBLEM = '/kbh/problems/01_fp8_gemm/reference.py';
const SHAPES: ProblemFolderShape[] = [
  { index: 0, values: { M: 4096, N: 4096, K: 4096 }, overrides: { M: 4096, N: 4096, K: 4096 }, unused: [] },
  { index: 1, values: { M: 32, N: 8192, K: 8192 }, overrides: { M: 32, N: 8192, K: 8192 }, unused: [] },
  { index: 2, values: { M: 8, N: 64, K: 64, extreme: true }, overrides: { M: 8, N: 64, K: 64 }, unused: ['extreme'] },
];

function sweep(results: EvaluationResult[]): EvaluationResult {
  return combineShapeResults(SHAPES.map((shape, index) => ({ shape, overrides: shape.overrides, result: results[index]! })));
}

/** The fake's incorrect result, its first trial naming where it first differed. */
function withFirstMismatch(result: EvaluationResult): EvaluationResult {
  const correctness = result.correctness!;
  const [first, ...rest] = correctness.trial_details ?? [];
  return { ...result, correctness: { ...correctness, trial_details: [{ ...first!, first_mismatch: { index: [0, 3], expected: 0.5, actual: 0 } }, ...rest] } };
}

const render = (result: EvaluationResult): string => renderEvaluation(result, picocolors.createColors(false));

describe("kforge eval's account of a problem folder", () => {
  it('a correct sweep: the first shape timed in the table above, a row per shape, and the geometric mean', () => {
    const text = render(
      sweep([
        correctResult({ problem: PROBLEM, medianMs: 1, eagerMs: 2 }),
        correctResult({ problem: PROBLEM, medianMs: 0.5, eagerMs: 4 }),
        correctResult({ problem: PROBLEM, medianMs: 2, eagerMs: 1 }),
      ]),
    );
    assert.match(text, /^correct {2}candidate\.py against 01_fp8_gemm\/reference\.py/);
    assert.match(text, /^timing of shape 0 \(M=4096, N=4096, K=4096\)$/m);
    assert.match(text, /speedup vs best baseline of shape 0 \(M=4096, N=4096, K=4096\): 2\.00x/);
    assert.match(text, /^shapes \(3 evaluated\)$/m);
    assert.match(text, /^ +shape {2}values +verdict +median ms +eager ms +compile ms +vs eager +vs compile +vs best$/m);
    assert.match(text, /^ +1 {2}M=32, N=8192, K=8192 +correct +0\.5000 +4\.000 +— +8\.00x +— +8\.00x$/m);
    assert.match(text, /^ +2 {2}M=8, N=64, K=64, extreme=true \(unused: extreme\) +correct/m);
    // (2 · 8 · 0.5)^(1/3) = 2
    assert.match(text, /geometric mean over 3 shapes: 2\.00x vs best baseline \(2\.00x vs eager, — vs torch\.compile\)/);
  });

  it("a failing sweep: the failing shape's reasons at the top, the other failures' first reason under the table, no mean", () => {
    const text = render(
      sweep([
        correctResult({ problem: PROBLEM, medianMs: 1, eagerMs: 2 }),
        withFirstMismatch(incorrectResult({ problem: PROBLEM })),
        runtimeErrorResult({ problem: PROBLEM, message: 'RuntimeError: K must be a multiple of 16' }),
      ]),
    );
    assert.match(text, /^incorrect {2}candidate\.py against 01_fp8_gemm\/reference\.py/);
    assert.match(text, /^ {2}\[mismatch\] shape 1 \(M=32, N=8192, K=8192\): output differs/m);
    assert.match(text, /^ +1 {2}M=32, N=8192, K=8192 +incorrect$/m);
    assert.match(text, /^ {2}shape 2 \[forward\] the candidate's forward raised: RuntimeError: K must be a multiple of 16$/m);
    assert.doesNotMatch(text, /shape 1 \[mismatch\]/, 'the leading failure is not said twice');
    assert.doesNotMatch(text, /geometric mean/);
    assert.match(text, /first mismatch: shape 1, trial 1 \(seed 11\), output\[0, 3\]: expected 0\.5, got 0/);
  });
});
