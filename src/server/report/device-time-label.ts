/**
 * What a run's device time is called in a report: `CPU time` on the cpu backend (the evaluations
 * held the host's cores, not a GPU), `GPU time` on cuda and triton, `device time` when unknown.
 */
export function deviceTimeLabel(backend: string | null | undefined): string {
  if (backend === 'cpu') return 'CPU time';
  if (backend === 'cuda' || backend === 'triton') return 'GPU time';
  return 'device time';
}
