import type { DeviceKind } from '../../backends/backend-module.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { detectVisibleCudaDevices } from '../../backends/nvidia/cuda-devices.js';
import { DevicePool } from './device-pool.js';
import { sizePipelineForHost, type PipelineSizing } from './pipeline-sizing.js';
import { Semaphore } from '../locks/semaphore.js';

/** The kinds of device a pipeline times on, one lane each: a backend's `detect.kind`. */
export type LaneKind = DeviceKind;

/**
 * One pipeline: its devices, the bounded build pool, and the bound on evaluations in flight
 * (building, built and waiting for a device, or on a device), which bounds the live processes.
 */
export interface PipelineLane {
  kind: LaneKind;
  devices: DevicePool;
  builds: Semaphore;
  inFlight: Semaphore;
  sizing: PipelineSizing;
}

export interface PipelineLaneOptions {
  /** CUDA devices (`cuda:N`); default: those visible to the workers. */
  cudaDevices?: readonly string[];
  sizing?: Partial<PipelineSizing>;
  environment: NodeJS.ProcessEnv;
}

/** The lane of a kind: `cpu` has the one device `cpu`; `gpu` every visible CUDA device. */
export async function createPipelineLane(kind: LaneKind, options: PipelineLaneOptions): Promise<PipelineLane> {
  const devices = kind === 'cpu' ? ['cpu'] : (options.cudaDevices ?? (await detectVisibleCudaDevices(options.environment)));
  if (devices.length === 0) {
    throw new EvaluatorSetupError('no CUDA device is visible to the workers (nvidia-smi lists none, or CUDA_VISIBLE_DEVICES hides them all)', {
      hint: 'run `kforge doctor`, or use --backend cpu',
    });
  }
  const sizing = { ...sizePipelineForHost(devices.length, kind === 'cpu'), ...options.sizing };
  return {
    kind,
    devices: new DevicePool({ devices }),
    builds: new Semaphore(sizing.buildConcurrency),
    inFlight: new Semaphore(sizing.buildConcurrency + sizing.maxWaitingForDevice + devices.length),
    sizing,
  };
}
