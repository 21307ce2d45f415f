/** Lines that CUDA and PyTorch print after the error that matters. */
const BOILERPLATE = [
  /^CUDA kernel errors might be asynchronously reported/i,
  /^For debugging consider passing CUDA_LAUNCH_BLOCKING/i,
  /^Compile with `?TORCH_USE_CUDA_DSA`? to enable device-side assertions/i,
  /^Traceback \(most recent call last\)/,
  /^File "/,
  /^[~^\s]+$/,
  /^During handling of the above exception/,
  /^The above exception was the direct cause/,
];

/** An exception's own line in a Python traceback: `RuntimeError: CUDA error: out of memory`. */
const EXCEPTION_LINE = /^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)(?::|$)/;

/** Longest line quoted, in characters. */
const LIMIT = 300;

function shorten(line: string): string {
  return line.length > LIMIT ? `${line.slice(0, LIMIT)}…` : line;
}

/**
 * The line of a process's stderr that says what went wrong: the last exception line of a Python
 * traceback (`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …`), else the last line
 * that is not CUDA's or Python's boilerplate (`Compile with TORCH_USE_CUDA_DSA …`); null when empty.
 *
 * @example meaningfulStderrLine('RuntimeError: CUDA error: out of memory\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n')
 * // 'RuntimeError: CUDA error: out of memory'
 */
export function meaningfulStderrLine(stderr: string): string | null {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    if (EXCEPTION_LINE.test(lines[index]!)) return shorten(lines[index]!);
  }
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    if (!BOILERPLATE.some((pattern) => pattern.test(lines[index]!))) return shorten(lines[index]!);
  }
  return null;
}

/** Whether a process's stderr says it ran out of memory (a CUDA context or an allocation). */
export function saysOutOfMemory(stderr: string): boolean {
  return /out of memory|OutOfMemoryError|can't allocate memory|cannot allocate memory|MemoryError/i.test(stderr);
}
