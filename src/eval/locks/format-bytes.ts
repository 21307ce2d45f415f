const GIB = 1024 ** 3;

/** Bytes as a person reads them: `6.00 GiB`, `512.0 MiB`. */
export function formatBytes(bytes: number): string {
  return bytes >= 0.1 * GIB ? `${(bytes / GIB).toFixed(2)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
