/** A time in milliseconds with three significant digits: `0.238 ms`, `12.3 ms`, `1480 ms`. */
export function formatMs(milliseconds: number): string {
  return `${formatSignificant(milliseconds)} ms`;
}

/** A speedup as `1.62x`; `—` when unknown. */
export function formatSpeedup(speedup: number | null | undefined): string {
  return speedup === null || speedup === undefined || !Number.isFinite(speedup) ? '—' : `${speedup.toFixed(2)}x`;
}

/** A share in [0, 1] as a percentage with no decimals: `67%`. */
export function formatShare(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** Dollars with cents, or four decimals below a cent: `$1.25`, `$0.0042`. */
export function formatUsd(amount: number): string {
  return amount !== 0 && Math.abs(amount) < 0.01 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(2)}`;
}

/** A count with thousands separators: `12,345`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** A number with three significant digits, without exponent for ordinary magnitudes. */
export function formatSignificant(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return value.toFixed(0);
  if (magnitude < 1e-3) return value.toExponential(2);
  return Number(value.toPrecision(3)).toString();
}

const KIB = 1024;
const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

/**
 * Bytes as a person reads them, in one format across kforge's messages: `512 B`, `1.5 KiB`,
 * `16.0 MiB`, and from a tenth of a GiB on two decimals of GiB (`0.75 GiB`, `80.00 GiB`), so that
 * the amounts of one message (a process's share, what is free, a device's memory) read in one unit.
 */
export function formatBytes(bytes: number): string {
  if (bytes < KIB) return `${bytes} B`;
  if (bytes < MIB) return `${(bytes / KIB).toFixed(1)} KiB`;
  if (bytes < 0.1 * GIB) return `${(bytes / MIB).toFixed(1)} MiB`;
  return `${(bytes / GIB).toFixed(2)} GiB`;
}
