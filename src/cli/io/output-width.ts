import type { TextSink } from './cli-io.js';

/** The width when nothing says otherwise: a terminal's classic 80 columns. */
export const DEFAULT_WIDTH_COLUMNS = 80;

/**
 * The width, in character cells, that text written to `stream` must fit so that no line wraps: a
 * terminal's own width; off a terminal (a pipe, a file) `COLUMNS` where it is a positive integer,
 * as `ls` reads it, else 80.
 */
export function outputWidth(stream: TextSink, environment: NodeJS.ProcessEnv): number {
  const terminal = stream as Partial<Pick<NodeJS.WriteStream, 'isTTY' | 'columns'>>;
  if (terminal.isTTY === true && typeof terminal.columns === 'number' && terminal.columns > 0) return terminal.columns;
  const columns = Number(environment.COLUMNS);
  return Number.isSafeInteger(columns) && columns > 0 ? columns : DEFAULT_WIDTH_COLUMNS;
}
