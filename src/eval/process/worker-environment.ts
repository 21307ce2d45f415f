/** Names passed through to a worker unchanged, when the parent has them. */
const ALLOWED_NAMES = new Set([
  'PATH',
  'LANG',
  'CUDA_VISIBLE_DEVICES',
  'CUDA_HOME',
  'LD_LIBRARY_PATH',
  'TORCH_CUDA_ARCH_LIST',
  'OMP_NUM_THREADS',
  'MAX_JOBS',
  'TORCH_SYMM_MEM_DISABLE_MULTICAST',
  'NVSHMEM_DISABLE_NVLS',
  // getpass.getuser() (used by torch.compile's cache paths) raises without these where the uid
  // has no passwd entry, as in many containers.
  'USER',
  'LOGNAME',
  // A directory for the worker's own sampling profile (a diagnostic; the worker removes it from
  // its environment before any problem or candidate code runs).
  'KFORGE_WORKER_PROFILE',
  // With it, the CUDA allocator's history and a snapshot per stage (sampling_profile.py).
  'KFORGE_WORKER_PROFILE_MEMORY',
]);

/** Prefixes passed through unchanged (locale settings, NCCL tuning). */
const ALLOWED_PREFIXES = ['LC_', 'NCCL_'];

/** Names that never reach a worker, even when an allowed prefix matches them. */
const DENIED_PATTERNS = [/_KEY$/i, /TOKEN/i, /SECRET/i, /PASSWORD/i];

export interface WorkerEnvironmentOptions {
  /** The scratch directory of this evaluation: it becomes the worker's `HOME`. */
  homeDirectory: string;
  /** Temporary directory for the worker (`TMPDIR`), inside the scratch directory. */
  temporaryDirectory: string;
  /** Directory holding the `kforge_worker` package, put on `PYTHONPATH`. */
  workerDirectory: string;
}

/** Whether a parent variable may be passed to a worker (allow-list, then deny-list). */
export function isPassedToWorker(name: string): boolean {
  if (DENIED_PATTERNS.some((pattern) => pattern.test(name))) return false;
  return ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * Builds a worker's whole environment from the parent's by an allow-list (docs/hacks.md #18): API keys,
 * tokens and anything not named here stay behind. `HOME` and `TMPDIR` point into the scratch
 * directory so caches and stray files land where they are removed afterwards.
 *
 * @example buildWorkerEnvironment(process.env, { homeDirectory, temporaryDirectory, workerDirectory })
 */
export function buildWorkerEnvironment(parentEnvironment: NodeJS.ProcessEnv, options: WorkerEnvironmentOptions): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnvironment)) {
    if (value !== undefined && isPassedToWorker(name)) environment[name] = value;
  }
  environment.HOME = options.homeDirectory;
  environment.TMPDIR = options.temporaryDirectory;
  environment.PYTHONPATH = options.workerDirectory;
  environment.PYTHONUNBUFFERED = '1';
  environment.PYTHONDONTWRITEBYTECODE = '1';
  environment.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return environment;
}
