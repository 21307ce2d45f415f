import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWorkerMessage, type MessageOfType } from '../process/protocol.js';
import { workerRequestSchema } from '../process/worker-requests.js';
import { resolveEvaluationSettings, withReportedTolerance } from './evaluation-settings.js';
import { declaredToleranceWins, dtypeTolerances, referenceToleranceFields, toleranceFor } from '../../core/tolerance.js';

function ready(line: string): MessageOfType<'reference-ready'> {
  const result = parseWorkerMessage(line, 'reference');
  if (!result.ok || result.message.type !== 'reference-ready') throw new Error(`expected reference-ready: ${line}`);
  return result.message;
}

describe('the tolerance of a run (docs/spec.md section 4)', () => {
  it('keeps the profiles of the three cast precisions', () => {
    assert.deepEqual(toleranceFor('kernelbench', 'fp32'), { atol: 1e-2, rtol: 1e-2 });
    assert.deepEqual(toleranceFor('strict', 'fp32'), { atol: 1e-4, rtol: 1e-4 });
    assert.deepEqual(toleranceFor('strict', 'bf16'), { atol: 1e-2, rtol: 1e-2 });
  });

  it('under native, sends the profile per output dtype and lets a declared tolerance win only under kernelbench', () => {
    assert.deepEqual(referenceToleranceFields('strict', 'native'), {
      atol: 1e-4,
      rtol: 1e-4,
      dtype_tolerances: dtypeTolerances('strict'),
      declared_tolerance: false,
    });
    assert.deepEqual(dtypeTolerances('strict').float8_e4m3fn, { atol: 1e-2, rtol: 1e-2 });
    assert.equal(dtypeTolerances('strict').float32, undefined, 'float32 outputs take atol/rtol');
    assert.deepEqual(referenceToleranceFields('kernelbench', 'fp16'), { atol: 1e-2, rtol: 1e-2, declared_tolerance: true });
    assert.equal(declaredToleranceWins('strict'), false);
    const request = {
      v: 1,
      type: 'reference',
      problem: '/p.py',
      backend: 'cpu',
      precision: 'native',
      preset: 'cpu',
      device: 'cpu',
      correctness_seeds: [1],
      timing_seeds: [],
      baselines: null,
      ...referenceToleranceFields('kernelbench', 'native'),
    };
    assert.ok(workerRequestSchema.safeParse(request).success, 'the request validates');
  });

  it('takes the tolerance the reference role reports for the judge and the verdict', () => {
    const settings = resolveEvaluationSettings({
      problemPath: 'p.py',
      candidatePath: 'c.py',
      backend: 'cpu',
      precision: 'native',
      tolerance: 'kernelbench',
    });
    assert.deepEqual(settings.tolerance, { atol: 1e-2, rtol: 1e-2, source: 'profile', dtype: null });
    const reported = ready(
      '{"v":1,"type":"reference-ready","trials":[{"seed":11,"input_digest":"ab","output":"[tensor bfloat16 (8, 32)]"}],"tolerance":{"atol":0.1,"rtol":0.05,"source":"problem","dtype":"bfloat16"}}',
    );
    assert.deepEqual(withReportedTolerance(settings, reported).tolerance, { atol: 0.1, rtol: 0.05, source: 'problem', dtype: 'bfloat16' });
    const older = ready('{"v":1,"type":"reference-ready","trials":[]}');
    assert.equal(withReportedTolerance(settings, older), settings, 'a worker that reports none leaves the profile');
  });
});
