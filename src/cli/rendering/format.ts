import path from 'node:path';

/** `850 ms`, `45.2 s`, `3 min 5 s`. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${milliseconds < 10 ? milliseconds.toFixed(1) : Math.round(milliseconds)} ms`;
  const seconds = milliseconds / 1000;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** A time in milliseconds with four significant digits: `0.02187`, `8.093`, `1234`. */
export function formatMilliseconds(value: number): string {
  return value >= 1000 ? value.toFixed(0) : value.toPrecision(4);
}

/** An error figure: `0`, `5.4e-7`, `0.0123`. */
export function formatError(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value === 0) return '0';
  return Math.abs(value) < 1e-3 ? value.toExponential(1) : value.toPrecision(3);
}

/** A speedup: `1.42x`, or `—` when there is none. */
export function formatSpeedup(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toFixed(2)}x`;
}

/**
 * A problem's file as a line names it: its file name (`02_gelu.py`), with its folder for a
 * problem folder's reference.py (`01_fp8_gemm/reference.py`), whose name alone says nothing.
 */
export function formatProblemName(problemPath: string): string {
  const name = path.basename(problemPath);
  return name === 'reference.py' ? path.join(path.basename(path.dirname(problemPath)), name) : name;
}
