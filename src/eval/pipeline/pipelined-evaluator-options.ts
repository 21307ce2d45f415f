import type { BuildCache } from '../cache/build-cache.js';
import type { SandboxPolicy } from '../process/worker-sandbox.js';
import type { WorkerEvaluatorOptions } from '../run/worker-evaluator-options.js';
import type { WarmWorkerPoolStats } from '../warm-workers/warm-worker-pool.js';
import type { PrefetchStats } from './baseline-prefetcher.js';
import type { DeviceUsage } from './device-pool.js';
import type { PipelineSizing } from './pipeline-sizing.js';

export interface PipelinedEvaluatorOptions extends WorkerEvaluatorOptions {
  buildCache: BuildCache;
  /** CUDA devices of the GPU backends; default: every visible one (CUDA_VISIBLE_DEVICES respected). */
  cudaDevices?: readonly string[];
  /** Overrides of the sizing derived from the host's cores and memory. */
  sizing?: Partial<PipelineSizing>;
  /** The host compiler's identity for build keys; probed once by default. */
  compilerIdentity?: () => Promise<string | null>;
  /**
   * Also pause builds and warm-ups while a GPU's timed stages run (a candidate's timed calls, the
   * baselines); on the cpu backend they always pause. Default false: the GPU build pool leaves a
   * core per GPU free, a baseline stage includes torch.compile's own compilation (tens of seconds
   * during which every build would stop), and a pause cannot stop GPU work already queued.
   */
  pauseBuildsDuringGpuTiming?: boolean;
  /**
   * Measure a problem's baselines as soon as its first candidate is submitted, in a reference worker
   * of their own, while the candidates build (the device is idle then), instead of inside the first
   * candidate's device lease. Default: on GPU lanes (on the cpu backend a baseline pauses the builds,
   * so it gains nothing there).
   */
  prefetchBaselines?: boolean;
  /**
   * The folder of the host-wide GPU locks that every kforge process of the host shares, so that two
   * processes never hold one GPU at once (the cpu device is not locked). Default:
   * `kforge-device-locks` in the system's temporary folder (`defaultDeviceLockDirectory`).
   */
  deviceLockDirectory?: string;
  /**
   * The workers' bytecode cache (bytecode-cache.ts), used only where the installed packages have no
   * bytecode of their own. Default: `pycache` beside the build cache's folder.
   */
  bytecodeCacheDirectory?: string;
  /**
   * How workers are isolated (worker-sandbox.ts); default from `KFORGE_SANDBOX`, hiding the cache
   * root (the folder above the build cache's) and the home folder from candidates.
   */
  sandbox?: SandboxPolicy;
  /**
   * Estimate each problem's peak memory before its evaluation holds the device, refuse what cannot
   * fit (`ProblemTooLargeError`), and reserve the estimate in the device's host-wide memory budget
   * (`<deviceLockDirectory>/<device>.budget`, capacity from `KFORGE_DEVICE_MEMORY_BYTES`, else the
   * GPU's or the host's memory). Default true.
   */
  memoryBudget?: boolean;
}

/** What the pipeline did so far, for benchmarks and logs. */
export interface PipelineUsage {
  devices: DeviceUsage[];
  pool: WarmWorkerPoolStats;
  /** Pauses of background work while the CPU timed (count and total ms). */
  cpuQuiet: { pauses: number; pausedMs: number };
  /** Baseline prefetches by outcome, and the device time they held (ms). */
  prefetches: PrefetchStats;
}
