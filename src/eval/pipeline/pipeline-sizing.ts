import os from 'node:os';

/** Memory one concurrent build is allowed for, in bytes: nvcc/cc1plus on torch's headers peak near 1.5 GiB. */
export const BUILD_MEMORY_BYTES = 2 * 1024 ** 3;

export interface PipelineSizingInputs {
  /** Cores the host offers (`os.availableParallelism()`). */
  cores: number;
  /** Memory free for builds, in bytes (`os.freemem()`). */
  freeMemoryBytes: number;
  /** Devices that run candidates (GPUs, or 1 for the CPU). */
  devices: number;
  /** Whether the devices are the CPU itself. */
  cpuBackend: boolean;
}

/** How many candidates build at once, how many may wait built, and how many warm workers to keep. */
export interface PipelineSizing {
  buildConcurrency: number;
  /** Evaluations past their build and waiting for a device, at most (each holds a live worker). */
  maxWaitingForDevice: number;
  /** Idle warm workers per device, by role. */
  warmCandidatesPerDevice: number;
  warmReferencesPerDevice: number;
}

/**
 * The bounded build pool sized to the host. On a GPU host one core per GPU (its candidate and
 * reference processes) and one for the orchestrator are kept out of the build pool; on the cpu
 * backend every core builds, because builds are paused while a candidate is timed. Each build is
 * allowed {@link BUILD_MEMORY_BYTES}. Two built candidates per device may wait, so a device finds
 * the next one ready when it frees.
 */
export function sizePipeline(inputs: PipelineSizingInputs): PipelineSizing {
  const byCores = inputs.cpuBackend ? inputs.cores : inputs.cores - inputs.devices - 1;
  const byMemory = Math.floor(inputs.freeMemoryBytes / BUILD_MEMORY_BYTES);
  const buildConcurrency = Math.max(1, Math.min(byCores, byMemory));
  return {
    buildConcurrency,
    maxWaitingForDevice: 2 * inputs.devices,
    warmCandidatesPerDevice: Math.max(1, Math.min(4, Math.ceil(buildConcurrency / inputs.devices))),
    warmReferencesPerDevice: 2,
  };
}

/** {@link sizePipeline} for this host. */
export function sizePipelineForHost(devices: number, cpuBackend: boolean): PipelineSizing {
  return sizePipeline({ cores: os.availableParallelism(), freeMemoryBytes: os.freemem(), devices, cpuBackend });
}
