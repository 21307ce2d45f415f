import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measuredUnder, measuringPolicy } from './measuring-policy.js';

describe('measuringPolicy', () => {
  it("reads the policy a rejection's first reason names", () => {
    const plain = `correctness trial 0 (seed 7): its kernel is PyTorch; write the kernel (${measuredUnder('pytorch')})`;
    assert.equal(measuringPolicy({ verdict: 'rejected', reasons: [{ check: 'torch-fallback', message: plain }] }), 'pytorch');
    const beside = `forward dispatched aten::add ×1 to PyTorch (${measuredUnder('kernelbench')})`;
    assert.equal(measuringPolicy({ verdict: 'rejected', reasons: [{ check: 'torch-fallback', message: beside }] }), 'kernelbench');
  });

  it('names none for another verdict, a rejection no policy waives, or a name that is no shipped policy', () => {
    const plain = `write the kernel (${measuredUnder('pytorch')})`;
    assert.equal(
      measuringPolicy({
        verdict: 'incorrect',
        reasons: [
          { check: 'shape', message: 'wrong shape' },
          { check: 'torch-fallback', message: plain },
        ],
      }),
      null,
    );
    assert.equal(measuringPolicy({ verdict: 'rejected', reasons: [{ check: 'stale-output', message: 'never written' }] }), null);
    assert.equal(measuringPolicy({ verdict: 'rejected', reasons: [{ check: 'x', message: 'the guard policy `lenient` would measure it' }] }), null);
  });
});
