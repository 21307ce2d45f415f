/** A frame a live view drew on a terminal, ANSI codes removed. */
export interface TerminalFrame {
  lines: string[];
  /** Lines the erasure before this frame went up: the height of the frame before it. */
  erasedAbove: number;
}

// log-update's erasure of the previous frame: erase the line, go up, …, then to column 1.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\u001b) starts the ANSI escape sequences this reads.
const ERASE = /((?:\u001b\[2K(?:\u001b\[1A)?)+)\u001b\[G/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\u001b) starts the ANSI escape sequences this reads.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\u001b) starts the ANSI escape sequences this reads.
const UP = /\u001b\[1A/g;

const plainLines = (text: string): string[] => {
  const lines = text.replace(/\r/g, '').replace(ANSI, '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
};

/**
 * What a command printed on a pseudo-terminal (test-support/pty-run.py's raw output), cut into the
 * frames its live view drew (log-update erases each frame before the next) and what came after the
 * last one. `lastFrameLength` says how many lines of the last chunk belong to the last frame (the
 * rest was printed after the view ended).
 */
export function terminalFrames(raw: string, lastFrameLength: (lines: readonly string[]) => number): { frames: TerminalFrame[]; after: string[] } {
  const frames: TerminalFrame[] = [];
  let erasedAbove = 0;
  let start = 0;
  for (const match of raw.matchAll(ERASE)) {
    frames.push({ lines: plainLines(raw.slice(start, match.index)), erasedAbove });
    erasedAbove = (match[1]!.match(UP) ?? []).length;
    start = match.index + match[0].length;
  }
  const last = plainLines(raw.slice(start));
  const length = lastFrameLength(last);
  frames.push({ lines: last.slice(0, length), erasedAbove });
  return { frames, after: last.slice(length) };
}
