import { backendModule } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';

/**
 * The devices a local pipeline is limited to when a command names one (`--device`): that device of
 * a GPU backend (`cuda:0` by default); nothing on the cpu backend, whose lane has the one device `cpu`.
 */
export function pipelineDevicesFor(backend: Backend, deviceIndex: number | undefined): { cudaDevices?: string[] } {
  const { detect } = backendModule(backend);
  return detect.kind === 'cpu' ? {} : { cudaDevices: [detect.deviceName(deviceIndex)] };
}
