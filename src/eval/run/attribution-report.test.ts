import assert from 'node:assert/strict';
import { measuredUnder, measuringPolicy } from '../../core/measuring-policy.js';
import { test } from 'node:test';
import { applySubstitution, attributionLine, buildAttribution, operatorFamily } from './attribution-report.js';
import type { MessageOfType } from '../process/protocol.js';

function measured(ops: Array<{ op: string; ms: number; compute?: boolean }>, own: number, library = 0): MessageOfType<'attribution'> {
  const torch = ops.reduce((sum, entry) => sum + entry.ms, 0);
  return {
    v: 1,
    type: 'attribution',
    measured: 'device',
    own_share: own / (own + library + torch),
    by_origin_ms: { own, library, torch },
    torch_ops: ops,
    unavailable: null,
  };
}

function reference(...ops: string[]): MessageOfType<'reference-ops'> {
  return { v: 1, type: 'reference-ops', ops: ops.map((op) => ({ op, calls: 1 })), unavailable: null };
}

test('operators of one family are the same computation', () => {
  assert.equal(operatorFamily('aten::mm'), operatorFamily('aten::addmm'));
  assert.equal(operatorFamily('aten::_softmax'), 'softmax');
  assert.equal(operatorFamily('aten::convolution'), operatorFamily('aten::cudnn_convolution'));
  assert.equal(operatorFamily('aten::add.Tensor'), 'add');
  assert.notEqual(operatorFamily('aten::mean.dim'), operatorFamily('aten::sum.dim_IntList'));
  assert.equal(operatorFamily('aten::relu_'), operatorFamily('aten::relu'));
  assert.equal(operatorFamily('aten::add_.Tensor'), 'add');
});

test('an out-of-place operator where the reference runs it in place is not substituted', () => {
  // thekernelcompany's Triton AlexNet: F.relu where KernelBench's reference has nn.ReLU(inplace=True).
  const attribution = buildAttribution(measured([{ op: 'aten::relu', ms: 0.015 }], 0.33), reference('aten::convolution', 'aten::relu_'), 'unused');
  assert.deepEqual(attribution.substituted_ops, []);
  assert.equal(attribution.torch_ops[0]?.in_reference, true);
});

test('a kept operator of the reference is in_reference, a different one is substituted', () => {
  const kept = buildAttribution(measured([{ op: 'aten::mm', ms: 0.38 }], 0.62), reference('aten::addmm', 'aten::gelu'), 'unused');
  assert.deepEqual(kept.torch_ops, [{ op: 'aten::mm', ms: 0.38, in_reference: true }]);
  assert.deepEqual(kept.substituted_ops, []);
  assert.equal(attributionLine(kept), '62% of device time in your kernels; 38% in aten::mm, which the reference also runs');

  const swapped = buildAttribution(
    measured(
      [
        { op: 'aten::_softmax', ms: 0.9 },
        { op: 'aten::sum', ms: 0.05 },
      ],
      0.05,
    ),
    reference('aten::exp', 'aten::sum'),
    'unused',
  );
  assert.deepEqual(swapped.substituted_ops, ['aten::_softmax']);
  assert.equal(swapped.torch_ops[1]?.in_reference, true);
});

test('substitution rests on what the operator did, not on its share of a noisy clock', () => {
  const softmax = { op: 'aten::_softmax', ms: 0.06, compute: true };
  const calm = buildAttribution(measured([softmax], 0.04), reference('aten::exp', 'aten::div'), 'unused');
  const preempted = buildAttribution(measured([softmax], 4.39), reference('aten::exp', 'aten::div'), 'unused');
  assert.deepEqual(calm.substituted_ops, ['aten::_softmax']);
  assert.deepEqual(preempted.substituted_ops, ['aten::_softmax'], 'a 1% share is still a substitution');

  const glue = buildAttribution(
    measured(
      [
        { op: 'aten::copy_', ms: 0.5, compute: false },
        { op: 'aten::add', ms: 0.3, compute: false },
      ],
      0.2,
    ),
    reference('aten::relu'),
    'unused',
  );
  assert.deepEqual(glue.substituted_ops, [], 'a copy and scalar bookkeeping do no work, however long they take');
  assert.equal(applySubstitution({ verdict: 'correct', reasons: [] }, glue, 'own-kernels').verdict, 'correct');
});

test('without the reference operators in_reference is null and nothing is called substituted', () => {
  const unknown = buildAttribution(
    measured([{ op: 'aten::_softmax', ms: 1 }], 0.1),
    { v: 1, type: 'reference-ops', ops: [], unavailable: 'no dispatch modes' },
    'unused',
  );
  assert.equal(unknown.torch_ops[0]?.in_reference, null);
  assert.deepEqual(unknown.substituted_ops, []);
  assert.match(unknown.notes?.[0] ?? '', /no dispatch modes/);
});

test('a candidate that never reached its traced call gets an attribution that says so', () => {
  const missing = buildAttribution(undefined, reference('aten::relu'), 'rejected before its traced call');
  assert.deepEqual(missing, { own_share: null, by_origin_ms: null, torch_ops: [], substituted_ops: [], unavailable: 'rejected before its traced call' });
  assert.equal(attributionLine(missing), 'attribution not measured: rejected before its traced call');
});

test('a substituted operator rejects under own-kernels and strict, and is reported under the other policies', () => {
  const attribution = buildAttribution(measured([{ op: 'aten::_softmax', ms: 0.9 }], 0.1), reference('aten::exp', 'aten::div'), 'unused');
  const correct = { verdict: 'correct' as const, reasons: [] };
  assert.equal(applySubstitution(correct, attribution, 'kernelbench'), correct);
  assert.equal(applySubstitution(correct, attribution, 'permissive'), correct);
  assert.equal(applySubstitution(correct, attribution, 'pytorch'), correct);
  const rejected = applySubstitution(correct, attribution, 'own-kernels');
  assert.equal(rejected.verdict, 'rejected');
  assert.equal(rejected.reasons[0]?.check, 'substituted-op');
  assert.match(rejected.reasons[0]?.message ?? '', /aten::_softmax \(90% of the call's time\), which the reference never runs/);
  // The policy that would measure it is named: `kernelbench` allows the operator.
  assert.match(
    rejected.reasons[0]?.message ?? '',
    /\(the guard policy `kernelbench` would measure it with PyTorch operators beside its kernels reported, not rejected\)$/,
  );
  assert.equal(measuringPolicy(rejected), 'kernelbench');
  const fallback = { verdict: 'rejected' as const, reasons: [{ check: 'torch-fallback', message: 'forward dispatched aten::_softmax ×1' }] };
  assert.deepEqual(
    applySubstitution(fallback, attribution, 'strict').reasons.map((reason) => reason.check),
    ['substituted-op', 'torch-fallback'],
  );
  // Where the worker's own rejection names `pytorch` (no kernel of its own did the work), so does this one.
  const plain = {
    verdict: 'rejected' as const,
    reasons: [{ check: 'torch-fallback', message: `no kernel of its own did the work (${measuredUnder('pytorch')})` }],
  };
  assert.equal(measuringPolicy(applySubstitution(plain, attribution, 'own-kernels')), 'pytorch');
  const other = { verdict: 'rejected' as const, reasons: [{ check: 'stale-output', message: 'never written' }] };
  assert.equal(applySubstitution(other, attribution, 'strict'), other);
});
