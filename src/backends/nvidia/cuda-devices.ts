import { detectGpus, type DetectedGpu } from './gpu-detection.js';

/**
 * How many CUDA devices a process started with `CUDA_VISIBLE_DEVICES=visible` sees, on a host where
 * nvidia-smi lists `detectedCount` GPUs. Unset: all of them. Set: its comma-separated entries in
 * order, up to the first invalid one, as CUDA itself reads it: an empty entry, a negative number,
 * an index past the detected GPUs or a repeated one ends the list (`-1` or `''` hides every GPU).
 * UUID entries (`GPU-…`, `MIG-…`) count as given.
 *
 * @example visibleCudaDeviceCount('2,3', 8) // 2
 */
export function visibleCudaDeviceCount(visible: string | undefined, detectedCount: number): number {
  if (visible === undefined) return detectedCount;
  const seen = new Set<string>();
  for (const raw of visible.split(',')) {
    const entry = raw.trim();
    const isIndex = /^\d+$/.test(entry);
    const isUuid = /^(GPU|MIG)-[\w-]+$/i.test(entry);
    if (!isIndex && !isUuid) break;
    const id = isIndex ? String(Number(entry)) : entry.toLowerCase();
    if (isIndex && Number(entry) >= detectedCount) break;
    if (seen.has(id)) break;
    seen.add(id);
  }
  return seen.size;
}

/** The logical device names `cuda:0` … `cuda:<count-1>`. */
export function cudaDeviceNames(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `cuda:${index}`);
}

/**
 * The CUDA devices workers started with `environment` will see (`CUDA_VISIBLE_DEVICES` respected),
 * as `cuda:N` names; empty when there is no GPU.
 */
export async function detectVisibleCudaDevices(
  environment: NodeJS.ProcessEnv = process.env,
  detect: () => Promise<DetectedGpu[]> = () => detectGpus(),
): Promise<string[]> {
  const detected = await detect();
  return cudaDeviceNames(visibleCudaDeviceCount(environment.CUDA_VISIBLE_DEVICES, detected.length));
}
