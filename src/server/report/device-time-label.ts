import { BACKEND_MODULES } from '../../backends/registry.js';

/**
 * What a run's device time is called in a report: its backend's `timeLabel` (`CPU time` on the cpu
 * backend, whose evaluations held the host's cores, `GPU time` on the GPU backends), `device time`
 * when the backend is unknown.
 */
export function deviceTimeLabel(backend: string | null | undefined): string {
  return BACKEND_MODULES.find((module) => module.name === backend)?.clock.timeLabel ?? 'device time';
}
