import type { TensorSize, WorkerAudit } from '../../eval/problem/problem-audit.js';

/**
 * What one problem needs at the sizes a run would use, before it runs: its tensors and a memory
 * figure. The one place a dry run takes it from, so a finer estimate can replace this one.
 */
export interface ProblemSizeEstimate {
  inputs: TensorSize[];
  outputs: TensorSize[];
  /**
   * Bytes of one call's inputs and outputs: a lower bound of what an evaluation holds (weights,
   * workspace, the float64 reference and each worker's own copies come on top); null when unknown.
   */
  estimatedBytes: number | null;
}

/** The estimate from the worker's audit of the problem (`inputs`/`outputs` of its first trial). */
export function sizeEstimateFromAudit(audit: WorkerAudit | null): ProblemSizeEstimate {
  if (!audit?.inputs || !audit.outputs) return { inputs: audit?.inputs ?? [], outputs: audit?.outputs ?? [], estimatedBytes: null };
  const bytes = [...audit.inputs, ...audit.outputs].reduce((sum, tensor) => sum + tensor.bytes, 0);
  return { inputs: audit.inputs, outputs: audit.outputs, estimatedBytes: bytes };
}

/** `256×8192 float32`. */
export function formatTensor(tensor: TensorSize): string {
  return `${tensor.shape.length === 0 ? 'scalar' : tensor.shape.join('×')} ${tensor.dtype}`;
}
