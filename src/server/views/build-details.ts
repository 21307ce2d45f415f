import type { z } from 'zod';
import type { EvaluationResult } from '../../core/verdict.js';
import type { buildDetailsSchema, kernelResourcesSchema } from '../api-schemas/candidate-schemas.js';

/** Per-kernel resources of a CUDA build, as the worker's `build-info` message reports them. */
export type KernelResources = z.infer<typeof kernelResourcesSchema>;
export type BuildDetails = z.infer<typeof buildDetailsSchema>;

/**
 * The register, shared-memory, spill, PTX and SASS figures of a result's `build` (CUDA only;
 * src/core/build-info.ts, worker/kforge_worker/build/build_info.py), or null when the result has none.
 */
export function buildDetails(result: EvaluationResult): BuildDetails | null {
  const build = result.build;
  if (!build) return null;
  return {
    kernels: build.kernels.map((kernel) => ({
      name: kernel.name,
      arch: kernel.arch ?? null,
      registers: kernel.registers ?? null,
      sharedBytes: kernel.shared_bytes ?? null,
      stackBytes: kernel.stack_bytes ?? null,
      localBytes: kernel.local_bytes ?? null,
    })),
    ptx: build.ptx ?? '',
    sass: build.sass ?? '',
    error: build.error ?? null,
  };
}
