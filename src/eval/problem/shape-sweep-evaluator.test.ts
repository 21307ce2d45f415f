import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { compileErrorResult, correctResult, FakeEvaluator, incorrectResult } from '../../../test-support/fake-evaluator.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import type { EvaluationRequest, ShapeStartedEvent } from '../evaluator.js';
import type { ProblemFolder } from './problem-folder.js';
import type { ProblemFolderReader } from './problem-folder-reader.js';
import { ShapeSweepEvaluator } from './shape-sweep-evaluator.js';

const FOLDER: ProblemFolder = {
  folder: '/problems/scale_shift',
  reference: '/problems/scale_shift/reference.py',
  name: 'scale_shift',
  shapes: [
    { index: 0, values: { rows: 8, cols: 64 }, overrides: { ROWS: 8, COLS: 64 }, unused: [] },
    { index: 1, values: { rows: 16, cols: 128 }, overrides: { ROWS: 16, COLS: 128 }, unused: [] },
    { index: 2, values: { rows: 4, cols: 300, wide: true }, overrides: { ROWS: 4, COLS: 300 }, unused: ['wide'] },
  ],
  forbidden: [],
};

const CANDIDATE = fixturePath('fake-scenarios', 'candidate-correct.py');

/** Reads `/problems/scale_shift` (or its reference.py) as FOLDER, `/problems/broken` as unusable, anything else as a single file. */
const readFolder: ProblemFolderReader = async (problemPath) => {
  if (problemPath.startsWith('/problems/scale_shift')) return { kind: 'folder', folder: FOLDER };
  if (problemPath.startsWith('/problems/broken')) return { kind: 'invalid', check: 'problem-load', message: '/problems/broken/shapes.py must define SHAPES' };
  return { kind: 'file' };
};

function request(problemPath: string, extra: Partial<EvaluationRequest> = {}): EvaluationRequest {
  return { problemPath, candidatePath: CANDIDATE, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench', ...extra };
}

/** Correct at 1 ms, except where the judge says otherwise by the shape's COLS. */
function judgeByColumns(verdicts: Record<number, (request: EvaluationRequest) => EvaluationResult>) {
  return (_source: string, seen: EvaluationRequest): EvaluationResult => {
    const columns = Number(seen.overrides?.COLS);
    return verdicts[columns]?.(seen) ?? correctResult({ problem: seen.problemPath, candidate: seen.candidatePath, medianMs: 1, eagerMs: 2 });
  };
}

describe('ShapeSweepEvaluator', () => {
  it("evaluates reference.py once per shape, in order, with the shape's constants under the caller's --set", async () => {
    const inner = new FakeEvaluator({ judge: judgeByColumns({}) });
    const shapes: ShapeStartedEvent[] = [];
    const { result, usage } = await new ShapeSweepEvaluator({ inner, readFolder }).evaluate(request('/problems/scale_shift', { overrides: { ROWS: 2 } }), {
      onShape: (event) => shapes.push(event),
    });
    assert.deepEqual(
      inner.calls.map((call) => [call.request.problemPath, call.request.overrides, 'shape' in call.request]),
      [
        ['/problems/scale_shift/reference.py', { ROWS: 2, COLS: 64 }, false],
        ['/problems/scale_shift/reference.py', { ROWS: 2, COLS: 128 }, false],
        ['/problems/scale_shift/reference.py', { ROWS: 2, COLS: 300 }, false],
      ],
    );
    assert.deepEqual(
      shapes.map((event) => [event.index, event.position, event.total, event.label]),
      [
        [0, 1, 3, 'shape 0 (rows=8, cols=64)'],
        [1, 2, 3, 'shape 1 (rows=16, cols=128)'],
        [2, 3, 3, 'shape 2 (rows=4, cols=300, wide=true)'],
      ],
    );
    assert.equal(evaluationResultSchema.parse(result).verdict, 'correct');
    assert.deepEqual(
      result.shapes?.map((outcome) => outcome.overrides),
      [
        { ROWS: 2, COLS: 64 },
        { ROWS: 2, COLS: 128 },
        { ROWS: 2, COLS: 300 },
      ],
    );
    assert.equal(usage.device, 'cpu');
  });

  it('goes on past an incorrect shape, so that each shape has its verdict', async () => {
    const inner = new FakeEvaluator({ judge: judgeByColumns({ 128: (seen) => incorrectResult({ problem: seen.problemPath }) }) });
    const { result } = await new ShapeSweepEvaluator({ inner, readFolder }).evaluate(request('/problems/scale_shift/reference.py'));
    assert.equal(inner.calls.length, 3);
    assert.equal(result.verdict, 'incorrect');
    assert.match(result.reasons[0]!.message, /^shape 1 \(rows=16, cols=128\): /);
    assert.deepEqual(
      result.shapes?.map((outcome) => outcome.verdict),
      ['correct', 'incorrect', 'correct'],
    );
  });

  it('stops at a compile error: every shape would end so', async () => {
    const inner = new FakeEvaluator({ judge: (_source, seen) => compileErrorResult({ problem: seen.problemPath }) });
    const { result } = await new ShapeSweepEvaluator({ inner, readFolder }).evaluate(request('/problems/scale_shift'));
    assert.equal(inner.calls.length, 1);
    assert.equal(result.verdict, 'compile_error');
    assert.equal(result.shapes?.length, 1);
  });

  it('`shape` picks one shape; one past the last is invalid_input saying how many there are', async () => {
    const inner = new FakeEvaluator({ judge: judgeByColumns({}) });
    const sweep = new ShapeSweepEvaluator({ inner, readFolder });
    const { result } = await sweep.evaluate(request('/problems/scale_shift', { shape: 2 }));
    assert.deepEqual(
      inner.calls.map((call) => call.request.overrides),
      [{ ROWS: 4, COLS: 300 }],
    );
    assert.deepEqual(
      result.shapes?.map((outcome) => outcome.index),
      [2],
    );
    const outside = (await sweep.evaluate(request('/problems/scale_shift', { shape: 3 }))).result;
    assert.equal(outside.verdict, 'invalid_input');
    assert.deepEqual(outside.reasons, [{ check: 'problem-shape', message: '--shape 3: the problem folder /problems/scale_shift has 3 shapes (0 to 2)' }]);
    assert.equal(inner.calls.length, 1, 'nothing more was evaluated');
  });

  it('passes a single-file problem through unchanged; a shape of one is invalid_input', async () => {
    const inner = new FakeEvaluator({ judge: judgeByColumns({}) });
    const sweep = new ShapeSweepEvaluator({ inner, readFolder });
    const { result } = await sweep.evaluate(request('/problems/level1/02_gelu.py', { overrides: { batch_size: 4 } }));
    assert.deepEqual(
      inner.calls.map((call) => [call.request.problemPath, call.request.overrides]),
      [['/problems/level1/02_gelu.py', { batch_size: 4 }]],
    );
    assert.equal(result.shapes, undefined);
    const shaped = (await sweep.evaluate(request('/problems/level1/02_gelu.py', { shape: 0 }))).result;
    assert.equal(shaped.verdict, 'invalid_input');
    assert.match(shaped.reasons[0]!.message, /a single-file problem; shapes belong to problem folders/);
  });

  it("a folder that cannot be used is invalid_input with the worker's message, and nothing runs", async () => {
    const inner = new FakeEvaluator();
    const { result, usage } = await new ShapeSweepEvaluator({ inner, readFolder }).evaluate(request('/problems/broken'));
    assert.equal(evaluationResultSchema.parse(result).verdict, 'invalid_input');
    assert.deepEqual(result.reasons, [{ check: 'problem-load', message: '/problems/broken/shapes.py must define SHAPES' }]);
    assert.equal(inner.calls.length, 0);
    assert.equal(usage.heldMs, 0);
  });
});
