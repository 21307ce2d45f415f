import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { correctResult, incorrectResult } from '../../../test-support/fake-evaluator.js';
import type { ProblemFolderShape } from './problem-folder.js';
import { combineShapeResults, geometricMean, type EvaluatedShape } from './shape-sweep-result.js';

const PROBLEM = '/problems/01_fp8_gemm/reference.py';

function shape(index: number, values: Record<string, number | boolean>, unused: string[] = []): ProblemFolderShape {
  const overrides = Object.fromEntries(Object.entries(values).filter(([key]) => !unused.includes(key)));
  return { index, values, overrides, unused };
}

function evaluated(entry: ProblemFolderShape, result: EvaluationResult): EvaluatedShape {
  return { shape: entry, overrides: entry.overrides, result };
}

const SHAPES = [shape(0, { M: 4096, N: 4096, K: 4096 }), shape(1, { M: 32, N: 8192, K: 8192 }), shape(2, { M: 8, N: 64, K: 64, extreme: true }, ['extreme'])];

describe('combineShapeResults: one result for a problem folder', () => {
  it("a correct sweep: every shape with its figures, geometric means as the speedups, the first shape's statistics", () => {
    const results = [
      correctResult({ problem: PROBLEM, medianMs: 1, eagerMs: 2 }),
      correctResult({ problem: PROBLEM, medianMs: 1, eagerMs: 8 }),
      correctResult({ problem: PROBLEM, medianMs: 2, eagerMs: 1 }),
    ];
    const combined = evaluationResultSchema.parse(combineShapeResults(SHAPES.map((entry, index) => evaluated(entry, results[index]!))));
    assert.equal(combined.verdict, 'correct');
    assert.deepEqual(combined.reasons, []);
    assert.equal(combined.shapes?.length, 3);
    assert.deepEqual(
      combined.shapes?.map((outcome) => [outcome.index, outcome.verdict, outcome.timing?.speedup_vs_eager]),
      [
        [0, 'correct', 2],
        [1, 'correct', 8],
        [2, 'correct', 0.5],
      ],
    );
    assert.deepEqual(combined.shapes?.[2]?.unused, ['extreme']);
    assert.deepEqual(combined.shapes?.[2]?.overrides, { M: 8, N: 64, K: 64 });
    assert.deepEqual(combined.shapes?.[2]?.values, { M: 8, N: 64, K: 64, extreme: true });
    // (2 · 8 · 0.5)^(1/3) = 2
    assert.ok(combined.verdict === 'correct' && combined.shape_geomean);
    assert.equal(combined.shape_geomean.shapes, 3);
    assert.ok(Math.abs(combined.shape_geomean.speedup_vs_eager! - 2) < 1e-12);
    assert.equal(combined.shape_geomean.speedup_vs_compile, null, 'torch.compile was measured at no shape');
    assert.equal(combined.timing?.speedup_vs_eager, combined.shape_geomean.speedup_vs_eager);
    assert.equal(combined.timing?.speedup_vs_best, combined.shape_geomean.speedup_vs_best);
    assert.equal(combined.timing?.candidate_ms.median, 1, "the statistics are the first shape's");
    assert.deepEqual(combined.problem_overrides, { M: 4096, N: 4096, K: 4096 });
    assert.equal(combined.correctness.trials, 15);
    assert.equal(combined.correctness.passed, 15);
    assert.deepEqual(combined.stages, { build: 135_000, load: 60, correctness: 900, timing: 2700 });
  });

  it('a failing shape leads: its verdict, its reasons naming it, every shape still listed; no geometric mean', () => {
    const results = [
      correctResult({ problem: PROBLEM, medianMs: 1, eagerMs: 2 }),
      incorrectResult({ problem: PROBLEM, maxAbsError: 0.5 }),
      incorrectResult({ problem: PROBLEM, maxAbsError: 3 }),
    ];
    const combined = evaluationResultSchema.parse(combineShapeResults(SHAPES.map((entry, index) => evaluated(entry, results[index]!))));
    assert.equal(combined.verdict, 'incorrect');
    assert.equal(combined.reasons.length, 1);
    assert.match(combined.reasons[0]!.message, /^shape 1 \(M=32, N=8192, K=8192\): output differs from the reference/);
    assert.equal(combined.reasons[0]!.check, 'mismatch');
    assert.deepEqual(
      combined.shapes?.map((outcome) => outcome.verdict),
      ['correct', 'incorrect', 'incorrect'],
    );
    assert.doesNotMatch(combined.shapes![1]!.reasons[0]!.message, /^shape/, "a shape's own reasons stay as its evaluation wrote them");
    assert.equal(combined.shapes?.[1]?.timing, undefined);
    assert.equal('shape_geomean' in combined, false);
    assert.equal('timing' in combined, false);
    assert.deepEqual(combined.problem_overrides, { M: 32, N: 8192, K: 8192 });
    assert.equal(combined.correctness?.max_abs_error, 3, 'the largest error over the shapes');
    assert.equal(combined.correctness?.passed, 5);
    assert.equal(combined.correctness?.trials, 15);
    assert.deepEqual(
      combined.correctness?.trial_details?.map((trial) => trial.shape),
      [1, 2],
      'each trial detail names its shape',
    );
  });

  it("a `--set` misuse keeps the worker's message, which `kforge eval` reports as a usage error", () => {
    const misuse: EvaluationResult = {
      verdict: 'invalid_input',
      reasons: [{ check: 'problem-override', message: '--set batch: the problem has no module-level constant `batch`' }],
      problem: PROBLEM,
      candidate: '/candidates/candidate.py',
      backend: 'cpu',
      precision: 'fp32',
      diagnostics: { stdout: '', stderr: '' },
      environment: null,
    };
    const combined = combineShapeResults([evaluated(SHAPES[0]!, misuse)]);
    assert.equal(combined.reasons[0]?.message, '--set batch: the problem has no module-level constant `batch`');
  });

  it('a correct sweep without timing (--no-timing) has no geometric mean', () => {
    const untimed = { ...correctResult({ problem: PROBLEM, medianMs: 1 }), timing: undefined };
    const combined = combineShapeResults(SHAPES.slice(0, 2).map((entry) => evaluated(entry, untimed)));
    assert.equal(combined.verdict, 'correct');
    assert.equal('shape_geomean' in combined && combined.shape_geomean !== undefined, false);
    assert.equal(combined.shapes?.[0]?.timing, undefined);
  });

  it('results stored before sweeps existed still parse', () => {
    const old = correctResult({ problem: '/problems/level1/02_gelu.py', medianMs: 1 });
    assert.equal(evaluationResultSchema.parse(old).shapes, undefined);
  });

  it("refuses an empty sweep, a caller's bug", () => {
    assert.throws(() => combineShapeResults([]), /at least one evaluated shape/);
  });
});

describe('geometricMean', () => {
  it('is the n-th root of the product; null when a figure is missing or not positive', () => {
    assert.ok(Math.abs(geometricMean([1, 4, 16])! - 4) < 1e-12);
    assert.equal(geometricMean([1, null, 4]), null);
    assert.equal(geometricMean([1, 0]), null);
    assert.equal(geometricMean([]), null);
  });
});
