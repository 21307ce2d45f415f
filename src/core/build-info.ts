import { z } from 'zod';

/**
 * What a CUDA build produced, the result's `build` field (docs/spec.md section 6): the worker's
 * `build-info` message without `v` and `type` (docs/worker-protocol.md; worker/kforge_worker/build/build_info.py).
 */

/** Resources of one kernel for one architecture, from `cuobjdump --dump-resource-usage`. */
export const kernelResourceSchema = z
  .object({
    /** The demangled name. */
    name: z.string(),
    mangled: z.string().optional(),
    /** `sm_90` and the like; null where cuobjdump named none. */
    arch: z.string().nullable().optional(),
    registers: z.number().int().nonnegative().nullable().optional(),
    shared_bytes: z.number().int().nonnegative().nullable().optional(),
    stack_bytes: z.number().int().nonnegative().nullable().optional(),
    /** Local memory per thread: non-zero means register spills (or local arrays). */
    local_bytes: z.number().int().nonnegative().nullable().optional(),
  })
  .catchall(z.unknown());
export type KernelResource = z.infer<typeof kernelResourceSchema>;

/** Per-kernel resources, SASS and PTX of the candidate's shared objects; `error` when cuobjdump is missing. */
export const buildInfoSchema = z
  .object({
    kernels: z.array(kernelResourceSchema),
    sass: z.string().nullable().optional(),
    ptx: z.string().nullable().optional(),
    /** The shared objects read. */
    objects: z.array(z.string()).optional(),
    /** Why the figures are missing, when they are. */
    error: z.string().optional(),
  })
  .catchall(z.unknown());
export type BuildInfo = z.infer<typeof buildInfoSchema>;
