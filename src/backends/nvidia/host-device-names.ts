/**
 * The host-wide name of the GPU a process sees as `cuda:<index>`: through `CUDA_VISIBLE_DEVICES`
 * when it is set (`2,3` makes `cuda:0` the host's `gpu2`; a UUID entry is kept as it is), else
 * `gpu<index>`. Two workers with different `CUDA_VISIBLE_DEVICES` then still lock the same name
 * for the same GPU.
 *
 * @example hostGpuName(0, '2,3') // 'gpu2'
 */
export function hostGpuName(index: number, visibleDevices: string | undefined): string {
  const entries = visibleDevices?.trim() ? visibleDevices.split(',').map((entry) => entry.trim()) : null;
  if (!entries) return `gpu${index}`;
  const entry = entries[index];
  if (entry === undefined || entry === '') return `gpu${index}`;
  return /^\d+$/.test(entry) ? `gpu${Number(entry)}` : entry;
}
