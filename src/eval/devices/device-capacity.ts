import os from 'node:os';
import { detectGpus } from '../../backends/nvidia/gpu-detection.js';
import { hostGpuName } from '../../backends/nvidia/host-device-names.js';

/** The variable that sets a device's memory budget by hand (any backend; `cpu` means the host's memory). */
export const DEVICE_MEMORY_VARIABLE = 'KFORGE_DEVICE_MEMORY_BYTES';

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/**
 * Bytes from `KFORGE_DEVICE_MEMORY_BYTES` (or `variable`): an integer, optionally with a binary unit (`12G`, `512MiB`).
 * Throws RangeError naming the bad value.
 */
export function parseByteSize(text: string, variable = DEVICE_MEMORY_VARIABLE): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!match) throw new RangeError(`expected ${variable} to be a number of bytes (e.g. 12G or 12884901888), got \`${text}\``);
  const bytes = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  if (!(bytes > 0)) throw new RangeError(`expected ${variable} to be positive, got \`${text}\``);
  return Math.floor(bytes);
}

/**
 * The memory a device offers an evaluation's budget, in bytes: `KFORGE_DEVICE_MEMORY_BYTES` when
 * set; else a GPU's total memory as nvidia-smi reports it (null when it cannot be read), or the
 * host's for `cpu`.
 */
export async function deviceCapacityBytes(device: string, environment: NodeJS.ProcessEnv): Promise<number | null> {
  const configured = environment[DEVICE_MEMORY_VARIABLE];
  if (configured !== undefined && configured.trim() !== '') return parseByteSize(configured);
  if (device === 'cpu') return os.totalmem();
  const name = hostGpuName(Number(device.slice('cuda:'.length)), environment.CUDA_VISIBLE_DEVICES);
  const index = /^gpu(\d+)$/.exec(name)?.[1];
  const gpus = await detectGpus();
  const gpu = index === undefined ? gpus[0] : gpus.find((candidate) => candidate.index === Number(index));
  return gpu?.memoryMiB ? gpu.memoryMiB * 1024 ** 2 : null;
}
