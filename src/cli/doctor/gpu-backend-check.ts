import { backendModule } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';
import { UsageError } from '../io/usage-error.js';

/**
 * Refuses a GPU backend on a machine where no GPU is visible, in one sentence saying what to do,
 * before any worker starts (a worker would only fail later with a protocol error).
 *
 * @throws UsageError for a backend that needs a GPU (its `detect.needs`) when `gpuVisible` is false.
 */
export function assertBackendRunsHere(backend: Backend, gpuVisible: boolean, command: 'eval' | 'optimize'): void {
  const { needs } = backendModule(backend).detect;
  if (needs === null || gpuVisible) return;
  const elsewhere = command === 'optimize' ? ' or send the evaluations to GPU hosts with --redis URL' : '';
  throw new UsageError(
    `--backend ${backend} needs ${needs} and none is visible here (nvidia-smi lists none, or CUDA_VISIBLE_DEVICES hides them); use --backend cpu${elsewhere}, or run on a GPU machine (\`kforge doctor\` says what this one has)`,
  );
}
