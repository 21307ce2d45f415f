import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { handoverSocketPath, PROFILE_FALLBACK, type ScratchDirectory } from './scratch-directory.js';
import type { WorkerRole } from '../worker-role.js';

/** `KFORGE_SANDBOX`: `1`/`on` (default) isolate as far as the machine allows, `0`/`off` not at all, `require` refuse to evaluate without every layer. */
export const SANDBOX_VARIABLE = 'KFORGE_SANDBOX';

export type SandboxMode = 'on' | 'off' | 'require';

/** The folder under the cache root where each reserved build key's stable path is linked to its candidate's scratch build folder. */
export const BUILD_STAGING_FOLDER = 'staging';

/** The folder under the cache root that holds the workers' read-only bytecode (bytecode-cache.ts). */
export const BYTECODE_FOLDER = 'pycache';

/** The folder under the cache root that holds the reference worker's torch.compile caches (Inductor's and Triton's). */
export const COMPILE_CACHE_FOLDER = 'compile';

/** Set to `0` to give every reference worker fresh torch.compile caches (to time compilation, or to rule the cache out). */
export const COMPILE_CACHE_VARIABLE = 'KFORGE_COMPILE_CACHE';

/** How the workers of an evaluator are isolated (docs/security.md). */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Folders the candidate must not see (an empty tmpfs covers them): the cache root, the parent's home. */
  hiddenPaths: readonly string[];
  /** Folders inside hidden ones that the candidate reads (read-only): the bytecode cache, the build staging folder. */
  exposedPaths: readonly string[];
  /** Folder holding `kforge_bootstrap.py` and `kforge_sandbox/` (trusted code of this checkout). */
  launcherDirectory: string;
  /**
   * The reference worker's persistent torch.compile caches (inside the hidden cache root, so no
   * candidate writes them), or null: fresh ones in each worker's scratch (the sandbox off, or
   * `KFORGE_COMPILE_CACHE=0`).
   */
  compileCache?: string | null | undefined;
}

/**
 * The mode `KFORGE_SANDBOX` asks for. A value that is none of `1`, `on`, `0`, `off`, `require` throws
 * a RangeError naming the variable and the value.
 */
export function sandboxMode(environment: NodeJS.ProcessEnv): SandboxMode {
  const raw = environment[SANDBOX_VARIABLE]?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === '1' || raw === 'on') return 'on';
  if (raw === '0' || raw === 'off') return 'off';
  if (raw === 'require') return 'require';
  throw new RangeError(`expected ${SANDBOX_VARIABLE} to be 1, on, 0, off or require, got \`${environment[SANDBOX_VARIABLE]}\``);
}

/**
 * The policy of workers whose caches live under `cacheRoot` (`$KFORGE_CACHE_DIR`, else `.kforge`,
 * which also holds the default run store): that root, the folders of `alsoHidden` (a baselines
 * folder given elsewhere, the working directory's `.kforge`) and the parent's home are hidden from
 * the candidate, with the bytecode cache and the build staging folder brought back read-only.
 * Throws a RangeError for a `KFORGE_SANDBOX` value it does not know.
 *
 * @example sandboxPolicy(process.env, '/work/project/.kforge')
 */
export function sandboxPolicy(
  environment: NodeJS.ProcessEnv,
  cacheRoot: string,
  options: { alsoHidden?: readonly string[]; launcherDirectory?: string } = {},
): SandboxPolicy {
  const root = path.resolve(cacheRoot);
  const home = os.homedir();
  const hiddenPaths = [root, ...(options.alsoHidden ?? []).map((folder) => path.resolve(folder)), ...(home && home !== '/' ? [path.resolve(home)] : [])];
  const mode = sandboxMode(environment);
  return {
    mode,
    hiddenPaths: [...new Set(hiddenPaths)],
    exposedPaths: [path.join(root, BYTECODE_FOLDER), path.join(root, BUILD_STAGING_FOLDER)],
    launcherDirectory: options.launcherDirectory ?? WORKER_DIRECTORY,
    compileCache: mode === 'off' || environment[COMPILE_CACHE_VARIABLE]?.trim() === '0' ? null : path.join(root, COMPILE_CACHE_FOLDER),
  };
}

/**
 * What a worker of `role` adds to its environment under `policy`: for the reference worker, the
 * persistent torch.compile caches (docs/timing.md, "The torch.compile baseline"), so that every
 * evaluation on this machine times the same compiled code with the same autotuned configurations
 * and compiles a reference once; nothing for the candidate, whose caches stay in its scratch.
 * With a profile asked for (`KFORGE_WORKER_PROFILE` in `parent`), a sandboxed candidate writes
 * it into its scratch's temporary folder, which the parent copies out: its own /tmp is private
 * to its sandbox, so a profile folder there would be written and lost.
 */
export function roleEnvironment(
  role: WorkerRole,
  policy: SandboxPolicy,
  scratch?: Pick<ScratchDirectory, 'temporaryDirectory'>,
  parent?: NodeJS.ProcessEnv,
): Record<string, string> {
  if (role === 'candidate' && policy.mode !== 'off' && scratch && parent?.KFORGE_WORKER_PROFILE) {
    return { KFORGE_WORKER_PROFILE: path.join(scratch.temporaryDirectory, PROFILE_FALLBACK) };
  }
  if (role !== 'reference' || !policy.compileCache) return {};
  return {
    TORCHINDUCTOR_CACHE_DIR: path.join(policy.compileCache, 'inductor'),
    TRITON_CACHE_DIR: path.join(policy.compileCache, 'triton'),
  };
}

export interface WorkerLaunchOptions {
  python: string;
  /** Folder holding the `kforge_worker` package. */
  workerDirectory: string;
  role: WorkerRole;
  scratch: ScratchDirectory;
  policy: SandboxPolicy;
  /** The read-only bytecode cache (`sys.pycache_prefix`), or null. */
  bytecodePrefix?: string | null | undefined;
}

/**
 * The command line of one worker: `python3 -I -B -u <launcher>/kforge_bootstrap.py … ROLE`, which
 * sets up the sandbox (worker/kforge_sandbox/launch.py) and runs `kforge_worker` inside it. `-I`
 * makes the interpreter ignore PYTHONPATH, the user's site folder and the working directory, so a
 * dropped sitecustomize or module runs nowhere; the worker's folder is passed as `--worker-dir`.
 */
export function workerLaunch(options: WorkerLaunchOptions): { command: string; args: string[] } {
  const { policy, scratch } = options;
  const args = [
    '-I',
    '-B',
    '-u',
    path.join(policy.launcherDirectory, 'kforge_bootstrap.py'),
    '--worker-dir',
    options.workerDirectory,
    '--sandbox',
    policy.mode,
  ];
  args.push('--writable', scratch.path, '--read-only', scratch.inputDirectory);
  if (options.role === 'candidate') args.push('--handover-socket', handoverSocketPath(scratch));
  for (const hidden of policy.hiddenPaths) args.push('--hide', hidden);
  for (const exposed of policy.exposedPaths) args.push('--expose', exposed);
  if (options.bytecodePrefix) args.push('--pycache-prefix', options.bytecodePrefix);
  args.push(options.role);
  return { command: options.python, args };
}

/**
 * Creates the exposed folders that do not exist yet: the sandbox binds a folder when the worker
 * starts, so one made later (the build staging folder of a first build) would stay hidden from it.
 */
export async function prepareSandboxFolders(policy: SandboxPolicy): Promise<void> {
  if (policy.mode === 'off') return;
  await Promise.all(policy.exposedPaths.map((folder) => mkdir(folder, { recursive: true })));
}
