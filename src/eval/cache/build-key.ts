import { createHash } from 'node:crypto';
import { z } from 'zod';
import { backendModule } from '../../backends/registry.js';
import { backendSchema, type Backend } from '../../core/verdict.js';
import type { WorkerEnvironment } from '../process/protocol.js';

/** Layout version of a build folder; a change makes every older entry a miss. */
export const BUILD_KEY_FORMAT = 1;

/**
 * Everything a candidate's build output depends on; its SHA-256 names the build folder. The
 * candidate's own sources and flags (`load_inline(cpp_sources=…, extra_cflags=…)`) live in its
 * file, so the file's hash stands for them; the rest is the toolchain and the architecture.
 */
export const buildKeyMaterialSchema = z.object({
  format: z.literal(BUILD_KEY_FORMAT),
  /** SHA-256 of the candidate file's bytes. */
  source_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 hex digest'),
  backend: backendSchema,
  torch: z.string(),
  cuda: z.string().nullable(),
  /** Compute capability built for (`9.0`); null where the backend's build does not depend on it (`build.ts`). */
  capability: z.string().nullable(),
  python: z.string().nullable(),
  /** Host processor model: host code may be built for it (`-march=native`). */
  host_cpu: z.string().nullable(),
  /** `<compiler>: <first line of --version>` of the host C++ compiler torch uses. */
  compiler: z.string().nullable(),
  nvcc: z.string().nullable(),
  /** TORCH_CUDA_ARCH_LIST as the parent passes it (on cuda the worker sets it from the capability). */
  arch_list: z.string().nullable(),
});
export type BuildKeyMaterial = z.infer<typeof buildKeyMaterialSchema>;

export interface BuildKeyInputs {
  /** SHA-256 of the candidate file. */
  sourceSha256: string;
  backend: Backend;
  /** The candidate worker's `hello` environment (the machine it builds on). */
  environment: WorkerEnvironment;
  /** From {@link probeCompilerIdentity}; null when no compiler answered. */
  compiler: string | null;
  /** The environment the workers' environment is filtered from. */
  parentEnvironment: NodeJS.ProcessEnv;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** The key material of one candidate build. */
export function buildKeyMaterialOf(inputs: BuildKeyInputs): BuildKeyMaterial {
  const { environment, backend } = inputs;
  const toolchain = backendModule(backend).build.toolchainKey(environment, inputs.parentEnvironment);
  return buildKeyMaterialSchema.parse({
    format: BUILD_KEY_FORMAT,
    source_sha256: inputs.sourceSha256,
    backend,
    torch: environment.torch,
    cuda: environment.cuda,
    capability: toolchain.capability,
    python: text(environment.python),
    host_cpu: text(environment.cpu),
    compiler: inputs.compiler,
    nvcc: toolchain.nvcc,
    arch_list: toolchain.arch_list,
  });
}

/** SHA-256 (hex) over the material's fields in sorted order: stable across processes and field order. */
export function buildKey(material: BuildKeyMaterial): string {
  const parsed = buildKeyMaterialSchema.parse(material);
  const ordered = Object.keys(parsed)
    .sort()
    .map((name) => [name, parsed[name as keyof BuildKeyMaterial]]);
  return createHash('sha256').update(JSON.stringify(ordered)).digest('hex');
}
