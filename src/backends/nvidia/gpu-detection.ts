import { execa } from 'execa';

/** A GPU as nvidia-smi reports it. */
export interface DetectedGpu {
  index: number;
  name: string;
  driver: string | null;
  memoryMiB: number | null;
}

/**
 * The GPUs `nvidia-smi` lists (it ignores CUDA_VISIBLE_DEVICES). An empty list when nvidia-smi
 * is absent, fails or takes longer than `timeoutMs`.
 */
export async function detectGpus(timeoutMs = 10_000): Promise<DetectedGpu[]> {
  const result = await execa('nvidia-smi', ['--query-gpu=index,name,driver_version,memory.total', '--format=csv,noheader,nounits'], {
    reject: false,
    timeout: timeoutMs,
  });
  if (result.failed || typeof result.stdout !== 'string') return [];
  return result.stdout
    .split('\n')
    .map((line) => line.split(',').map((field) => field.trim()))
    .filter((fields) => fields.length >= 2 && /^\d+$/.test(fields[0] ?? ''))
    .map(([index, name, driver, memory]) => ({
      index: Number(index),
      name: name ?? 'unknown GPU',
      driver: driver || null,
      memoryMiB: memory && /^\d+$/.test(memory) ? Number(memory) : null,
    }));
}

/** Whether a GPU is visible to CUDA programs: nvidia-smi lists one and CUDA_VISIBLE_DEVICES does not hide them all. */
export async function isGpuVisible(environment: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const visible = environment.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined && (visible.trim() === '' || visible.trim() === '-1')) return false;
  return (await detectGpus()).length > 0;
}
