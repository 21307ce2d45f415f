import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileErrorResult, correctResult, incorrectResult, rejectedResult, runtimeErrorResult } from '../../../../test-support/fake-evaluator.js';
import { combineShapeResults } from '../../../eval/problem/shape-sweep-result.js';
import { firstCompilerError, sourceLineOf, summarizeEvaluation } from './feedback.js';

test('a compile error shows the first error with its line, the known cause, and nearby output only', () => {
  const result = compileErrorResult({ line: 12 });
  result.diagnostics.known_cause = 'torch builds with __CUDA_NO_HALF_OPERATORS__: use __hadd';
  result.diagnostics.compiler = `${'noise line\n'.repeat(500)}${result.diagnostics.compiler}`;
  const text = summarizeEvaluation(result);
  assert.match(text, /^Verdict: compile_error/);
  assert.match(text, /First compiler error \(line 12 of the generated source\): main\.cpp:12:5: error: 'out_ptr' was not declared/);
  assert.match(text, /Known cause: torch builds with __CUDA_NO_HALF_OPERATORS__/);
  assert.ok(text.split('\n').filter((line) => line.includes('noise line')).length <= 2, 'the noise before the error is cut');
});

test('the first error is found in the compiler output when the evaluator did not pick it', () => {
  const output = "building\nnvcc fatal   : Unsupported gpu architecture 'compute_70'\nmore";
  assert.deepEqual(firstCompilerError(output), { line: "nvcc fatal   : Unsupported gpu architecture 'compute_70'", index: 1 });
  assert.equal(sourceLineOf('kernel.cu(88): error: identifier "foo" is undefined'), 88);
  assert.equal(sourceLineOf('no position here: error'), null);
});

test('a mismatch says where and how much the outputs differ', () => {
  const text = summarizeEvaluation(incorrectResult({ maxAbsError: 0.5, mismatched: 4096 }));
  assert.match(text, /Trials passed: 0 of 5/);
  assert.match(text, /max abs error 0\.5/);
  assert.match(text, /20480 elements outside tolerance/);
  assert.match(text, /atol=0\.01 rtol=0\.01/);
  assert.match(text, /seed 11, mismatch, 4096 of 8192 elements differ.*first mismatch at index \(0, 3\)/);
});

test('a runtime error shows the end of the traceback; a rejection the guard reasons', () => {
  assert.match(summarizeEvaluation(runtimeErrorResult()), /Traceback \(last lines\):[\s\S]*RuntimeError: expected a contiguous tensor/);
  const rejected = summarizeEvaluation(rejectedResult());
  assert.match(rejected, /The guard rejected it:\n- \[torch-compute-in-forward\] forward calls torch\.relu/);
});

test('a correct result shows timings with intervals and speedups against each baseline', () => {
  const text = summarizeEvaluation(correctResult({ medianMs: 0.5, eagerMs: 1, compileMs: 0.8 }));
  assert.match(text, /candidate 0\.5 ms median, 95% CI \[0\.49, 0\.51\] ms, n=100/);
  assert.match(text, /eager PyTorch 1 ms median.*speedup 2\.00x/);
  assert.match(text, /torch\.compile 0\.8 ms median.*speedup 1\.60x/);
  assert.match(text, /best baseline: 1\.60x/);
  assert.match(summarizeEvaluation(correctResult({ medianMs: 0.5 })), /torch\.compile: not measured \(torch 1\.13 has no torch\.compile\)/);
});

test('feedback is cut to its character limit', () => {
  const result = runtimeErrorResult({ message: 'x'.repeat(10_000) });
  const text = summarizeEvaluation(result, { maxChars: 400 });
  assert.ok(text.length <= 400);
  assert.match(text, /feedback cut/);
});

test("a problem folder's sweep: each shape's verdict, time and speedup, the failing trial's shape, and the geometric mean", () => {
  const shapes = [
    { index: 0, values: { M: 4096 }, overrides: { M: 4096 }, unused: [] },
    { index: 1, values: { M: 32 }, overrides: { M: 32 }, unused: [] },
  ];
  const failing = combineShapeResults([
    { shape: shapes[0]!, overrides: { M: 4096 }, result: correctResult({ medianMs: 1, eagerMs: 2 }) },
    { shape: shapes[1]!, overrides: { M: 32 }, result: incorrectResult() },
  ]);
  const text = summarizeEvaluation(failing);
  assert.match(text, /^- \[mismatch\] shape 1 \(M=32\): output differs/m);
  assert.match(text, /^- shape 1, seed 11, mismatch/m);
  assert.match(text, /^Shapes:\n- shape 0 \(M=4096\): correct, 1 ms, speedup 2\.00x against the best baseline\n- shape 1 \(M=32\): incorrect \[mismatch\]/m);
  const correct = combineShapeResults([
    { shape: shapes[0]!, overrides: { M: 4096 }, result: correctResult({ medianMs: 1, eagerMs: 2 }) },
    { shape: shapes[1]!, overrides: { M: 32 }, result: correctResult({ medianMs: 1, eagerMs: 8 }) },
  ]);
  assert.match(summarizeEvaluation(correct), /- geometric mean over the shapes: speedup 4\.00x against the best baseline/);
});
