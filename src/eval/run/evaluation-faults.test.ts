import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { machineFault } from './evaluation-faults.js';

describe("a worker's fault as a MachineFaultError", () => {
  it('names the limit of the stage that was too slow: --timeout-reference, or --timeout-judge for the judge', () => {
    const fault = (stage: 'reference' | 'judge') =>
      machineFault('reference', { v: 1, type: 'fault', stage, resource: 'time', message: `the ${stage} is too slow` });
    const reference = fault('reference');
    assert.equal(reference.message, 'the machine could not evaluate: the reference is too slow (reference process, reference stage); no verdict');
    assert.match(reference.hint, /--timeout-reference SECONDS/);
    const judge = fault('judge');
    assert.equal(judge.stage, 'judge');
    assert.match(judge.hint, /--timeout-judge SECONDS/);
    assert.doesNotMatch(judge.hint, /--timeout-reference/);
    assert.equal(judge.isRetryable, false, 'a measured pace is not tried again');
  });
});
