import type { EvaluationResult } from '../../core/verdict.js';

/** Per-kernel resources of a CUDA build, as the worker's `build-info` message reports them. */
export interface KernelResources {
  name: string;
  arch: string | null;
  registers: number | null;
  sharedBytes: number | null;
  stackBytes: number | null;
  localBytes: number | null;
}

export interface BuildDetails {
  kernels: KernelResources[];
  ptx: string;
  sass: string;
  error: string | null;
}

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const stringOr = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);

/**
 * The register, shared-memory, spill, PTX and SASS figures of a result's `build` (CUDA only;
 * see worker/kforge_worker/build_info.py), or null when the result has none.
 */
export function buildDetails(result: EvaluationResult): BuildDetails | null {
  const build = result.build;
  if (!build) return null;
  const kernels = Array.isArray(build.kernels) ? build.kernels : [];
  return {
    kernels: kernels.flatMap((kernel: unknown) => {
      if (kernel === null || typeof kernel !== 'object') return [];
      const entry = kernel as Record<string, unknown>;
      return [{
        name: stringOr(entry.name, stringOr(entry.mangled, '(unnamed)')),
        arch: typeof entry.arch === 'string' ? entry.arch : null,
        registers: numberOrNull(entry.registers),
        sharedBytes: numberOrNull(entry.shared_bytes),
        stackBytes: numberOrNull(entry.stack_bytes),
        localBytes: numberOrNull(entry.local_bytes),
      }];
    }),
    ptx: stringOr(build.ptx, ''),
    sass: stringOr(build.sass, ''),
    error: typeof build.error === 'string' ? build.error : null,
  };
}
