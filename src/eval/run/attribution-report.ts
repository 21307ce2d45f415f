import { POLICIES_REJECTING_PYTORCH } from '../../core/guard-policy.js';
import { measuredUnder, measuringPolicy } from '../../core/measuring-policy.js';
import type { Attribution, Reason } from '../../core/verdict.js';
import type { Outcome } from './outcome.js';
import type { MessageOfType } from '../process/protocol.js';

/**
 * Operators that count as the same computation when the reference runs any of them: a candidate
 * that keeps the reference's `nn.Linear` as `F.linear` without bias runs `aten::mm` where the
 * reference ran `aten::addmm`; neither substitutes anything.
 */
export const OPERATOR_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  'matrix-product': ['mm', 'addmm', 'bmm', 'baddbmm', 'matmul', 'linear', 'addmv', 'mv', 'dot', 'addmm_activation'],
  convolution: [
    'convolution',
    'conv1d',
    'conv2d',
    'conv3d',
    'cudnn_convolution',
    'mkldnn_convolution',
    'slow_conv2d_forward',
    'slow_conv3d_forward',
    'conv_transpose1d',
    'conv_transpose2d',
    'conv_transpose3d',
    'convolution_overrideable',
    'thnn_conv2d',
  ],
  softmax: ['softmax', 'log_softmax'],
  clamp: ['relu', 'clamp_min', 'clamp_max', 'clamp', 'threshold', 'relu6', 'hardtanh'],
  'layer-norm': ['layer_norm', 'native_layer_norm'],
  'batch-norm': ['batch_norm', 'native_batch_norm', 'native_batch_norm_legit', 'native_batch_norm_legit_no_training', 'cudnn_batch_norm', 'miopen_batch_norm'],
};

const FAMILY_OF = new Map(Object.entries(OPERATOR_FAMILIES).flatMap(([family, members]) => members.map((member) => [member, family] as const)));

/**
 * `aten::_softmax` → `softmax`; `aten::addmm` → `matrix-product`; `aten::add.Tensor` → `add`; an
 * in-place variant is its operator (`aten::relu_` → `relu`'s family: `nn.ReLU(inplace=True)` in the
 * reference and `F.relu` in the candidate are one computation).
 */
export function operatorFamily(name: string): string {
  const base = (name.includes('::') ? name.slice(name.indexOf('::') + 2) : name).split('.')[0]!.replace(/^_+|_+$/g, '');
  return FAMILY_OF.get(base) ?? base;
}

/**
 * The result's `attribution` from the candidate's `attribution` message and the reference's
 * `reference-ops` (either may be missing): `in_reference` per operator, `substituted_ops`: the
 * operators the reference never runs that did work (the worker's `compute` flag: neither glue that
 * launched a kernel nor scalar bookkeeping), whatever their share of the time, so that the name
 * does not move with a noisy clock. Without a measurement, `own_share` is null and `unavailable`
 * says why (`missingReason`).
 */
export function buildAttribution(
  measured: MessageOfType<'attribution'> | undefined,
  reference: MessageOfType<'reference-ops'> | undefined,
  missingReason: string,
): Attribution {
  if (!measured) return { own_share: null, by_origin_ms: null, torch_ops: [], substituted_ops: [], unavailable: missingReason };
  const known = reference && reference.unavailable === null ? new Set(reference.ops.map((entry) => operatorFamily(entry.op))) : null;
  const origin = measured.by_origin_ms;
  const torchOps = measured.torch_ops.map(({ op, ms, ...rest }) => ({ op, ms, in_reference: known ? known.has(operatorFamily(op)) : null, ...rest }));
  const substituted = torchOps.filter((entry) => entry.in_reference === false && entry.compute !== false).map((entry) => entry.op);
  const notes = [...(measured.notes ?? [])];
  if (reference && reference.unavailable !== null) notes.push(`the reference's operators are unknown (${reference.unavailable}): in_reference is null`);
  return {
    own_share: measured.own_share,
    by_origin_ms: measured.unavailable === null ? origin : null,
    torch_ops: torchOps,
    substituted_ops: substituted,
    measured: measured.measured,
    ...(measured.unavailable !== null ? { unavailable: measured.unavailable } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/**
 * The `substituted-op` rule (docs/guard.md): under a policy that rejects PyTorch compute
 * (`own-kernels`, `strict`), a substituted operator is a rejection, named first among the reasons
 * (the worker has usually rejected the same call as `torch-fallback` already). Other outcomes and
 * policies pass through unchanged.
 */
export function applySubstitution(outcome: Outcome, attribution: Attribution, policy: string): Outcome {
  if (attribution.substituted_ops.length === 0 || !(POLICIES_REJECTING_PYTORCH as readonly string[]).includes(policy)) return outcome;
  if (outcome.verdict !== 'correct' && !(outcome.verdict === 'rejected' && outcome.reasons[0]?.check === 'torch-fallback')) return outcome;
  const origin = attribution.by_origin_ms;
  const totalMs = origin ? origin.own + origin.library + origin.torch : 0;
  const named = attribution.substituted_ops
    .map((op) => {
      const ms = attribution.torch_ops.find((entry) => entry.op === op)?.ms ?? 0;
      return totalMs > 0 ? `${op} (${percent(ms / totalMs)} of the call's time)` : op;
    })
    .join(', ');
  // The policy that would measure it: `kernelbench` allows the operator; where the worker rejected
  // the call already, the one its reason names (`pytorch` when no kernel of its own did the work).
  const measured = outcome.verdict === 'rejected' ? measuringPolicy(outcome) : 'kernelbench';
  const measuredBy = measured === 'kernelbench' || measured === 'pytorch' ? ` (${measuredUnder(measured)})` : '';
  const reason: Reason = {
    check: 'substituted-op',
    message: `PyTorch's ${named}, which the reference never runs, does the work: the policy \`${policy}\` requires every compute operator to be your own; write the kernel instead of substituting a faster PyTorch operator${measuredBy}`,
  };
  return { ...outcome, verdict: 'rejected', reasons: [reason, ...(outcome.verdict === 'rejected' ? outcome.reasons : [])] };
}

/**
 * One line for people: "62% of device time in your kernels; 38% in aten::convolution, which the
 * reference also runs" (the largest operator named, its share and whether the reference runs it).
 */
export function attributionLine(attribution: Attribution): string {
  if (attribution.own_share === null || !attribution.by_origin_ms) {
    return `attribution not measured: ${attribution.unavailable ?? 'no traced call'}`;
  }
  const where = attribution.measured === 'host' ? 'host time' : 'device time';
  const origin = attribution.by_origin_ms;
  const totalMs = origin.own + origin.library + origin.torch;
  const parts = [`${percent(attribution.own_share)} of ${where} in your kernels`];
  const top = attribution.torch_ops[0];
  if (top && totalMs > 0) {
    const tail = top.in_reference === true ? ', which the reference also runs' : top.in_reference === false ? ', which the reference never runs' : '';
    const more =
      attribution.torch_ops.length > 1 ? ` (and ${attribution.torch_ops.length - 1} more PyTorch operator${attribution.torch_ops.length > 2 ? 's' : ''})` : '';
    parts.push(`${percent(top.ms / totalMs)} in ${top.op}${tail}${more}`);
  }
  if (origin.library > 0 && totalMs > 0) parts.push(`${percent(origin.library / totalMs)} in vendor libraries`);
  if (attribution.substituted_ops.length > 0) parts.push(`substituted: ${attribution.substituted_ops.join(', ')}`);
  return parts.join('; ');
}
