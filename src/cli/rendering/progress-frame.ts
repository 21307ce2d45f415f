import cliTruncate from 'cli-truncate';
import type picocolors from 'picocolors';
import { formatCount, formatSpeedup, formatUsd } from '../../core/number-format.js';
import type { ProblemProgress, RunProgressSnapshot } from '../../agent/run/run-progress.js';

type Colors = ReturnType<typeof picocolors.createColors>;

/** The terminal a frame is drawn for. */
export interface FrameSize {
  /** Width in character cells. */
  columns: number;
  /** Height in lines. */
  rows: number;
}

/** One column of the problem table: its header, its cell, and how it gives way on a narrow terminal. */
interface Column {
  header: string;
  cell: (problem: ProblemProgress, nowMs: number) => string;
  /** Width it needs (the flexible columns: the least they take). */
  width: number;
  /** Grows into the room left over, lowest first (stage, then name, then last outcome); absent for fixed columns. */
  growOrder?: number;
  /** Right-aligned (figures). */
  right?: boolean;
  /**
   * Columns with the highest number are dropped first when the terminal is too narrow: a problem's
   * tokens, then its cost (the summary line keeps the run's), then its last outcome, so that an
   * 80-column terminal still shows each candidate's verdict in full.
   */
  dropOrder: number;
}

/** A problem's wall time: frozen when done, ticking on from its last event while it runs. */
function elapsedMs(problem: ProblemProgress, nowMs: number): number {
  const base = problem.usage?.elapsedMs ?? 0;
  return problem.status === 'running' ? base + Math.max(0, nowMs - problem.usageAtMs) : base;
}

/** `45s`, `12m05s`, `3h07m`: short enough for a narrow column. */
export function formatClock(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** Tokens in at most six characters: `812`, `12.3k`, `1.20M`. */
function formatTokens(tokens: number): string {
  if (tokens < 10_000) return formatCount(tokens);
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(1)}k`;
  return `${(tokens / 1_000_000).toFixed(2)}M`;
}

const COLUMNS: readonly Column[] = [
  { header: 'problem', cell: (problem) => problem.name, width: 10, growOrder: 2, dropOrder: 0 },
  { header: 'stage', cell: (problem) => problem.stage, width: 16, growOrder: 1, dropOrder: 0 },
  { header: 'elapsed', cell: (problem, nowMs) => formatClock(elapsedMs(problem, nowMs)), width: 7, right: true, dropOrder: 0 },
  { header: 'cand', cell: (problem) => String(problem.usage?.candidates ?? 0), width: 4, right: true, dropOrder: 0 },
  { header: 'best', cell: (problem) => formatSpeedup(problem.usage?.bestSpeedup), width: 7, right: true, dropOrder: 0 },
  { header: 'tokens', cell: (problem) => formatTokens(problem.usage?.tokens ?? 0), width: 6, right: true, dropOrder: 3 },
  { header: 'cost', cell: (problem) => formatUsd(problem.usage?.costUsd ?? 0), width: 7, right: true, dropOrder: 2 },
  // Room for a verdict: `#12 compile_error`, `#3 correct 12.34x`.
  { header: 'last', cell: (problem) => problem.last, width: 17, growOrder: 3, dropOrder: 1 },
];

/**
 * Cells are padded with no-break spaces, not spaces: log-update re-wraps every line it draws
 * (wrap-ansi), at a cost that grows with the square of a line's space-separated words, and a
 * padded 200-column row is mostly spaces (measured: 315 ms per 200×50 frame with spaces, 12 ms
 * with no-break spaces). A terminal shows both the same.
 */
const PAD = '\u00a0';
const GAP = PAD.repeat(2);

/** The columns that fit `width` cells, each with the width it gets. */
function layout(width: number, problems: readonly ProblemProgress[], nowMs: number): Array<Column & { size: number }> {
  let chosen = [...COLUMNS];
  const needed = (columns: readonly Column[]): number => columns.reduce((sum, column) => sum + column.width, 0) + GAP.length * (columns.length - 1);
  while (needed(chosen) > width && chosen.some((column) => column.dropOrder > 0)) {
    const drop = Math.max(...chosen.map((column) => column.dropOrder));
    chosen = chosen.filter((column) => column.dropOrder !== drop);
  }
  let spare = Math.max(0, width - needed(chosen));
  const sized = chosen.map((column) => ({ ...column, size: column.width }));
  // Flexible columns grow to their longest cell while room is left: the stage first, so it stays legible.
  for (const column of sized.filter((entry) => entry.growOrder !== undefined).sort((a, b) => a.growOrder! - b.growOrder!)) {
    const longest = Math.max(column.header.length, ...problems.map((problem) => column.cell(problem, nowMs).length));
    const grow = Math.min(spare, Math.max(0, longest - column.size));
    column.size += grow;
    spare -= grow;
  }
  return sized;
}

function fit(text: string, size: number, right: boolean | undefined): string {
  const cut = text.length > size ? cliTruncate(text, size, { position: 'end' }) : text;
  return right ? cut.padStart(size, PAD) : cut.padEnd(size, PAD);
}

/** A line no wider than `width` (cut with `…` where longer). */
function cut(text: string, width: number): string {
  return text.length > width ? cliTruncate(text, width, { position: 'end' }) : text;
}

/**
 * Which problems get a row when not all fit: every running one first, then the most recently
 * finished; shown in run order.
 */
function visibleProblems(problems: readonly ProblemProgress[], room: number): ProblemProgress[] {
  if (problems.length <= room) return [...problems];
  const running = problems.filter((problem) => problem.status === 'running');
  const done = problems.filter((problem) => problem.status === 'done').sort((a, b) => b.usageAtMs - a.usageAtMs || b.index - a.index);
  return [...running, ...done].slice(0, Math.max(0, room)).sort((a, b) => a.index - b.index);
}

function summaryLine(snapshot: RunProgressSnapshot, nowMs: number): string {
  const done = snapshot.problems.filter((problem) => problem.status === 'done').length;
  const running = snapshot.problems.length - done;
  const total = Math.max(snapshot.total, snapshot.problems.length);
  const tokens = snapshot.problems.reduce((sum, problem) => sum + (problem.usage?.tokens ?? 0), 0);
  const cost = snapshot.problems.reduce((sum, problem) => sum + (problem.usage?.costUsd ?? 0), 0);
  const run = snapshot.runId ? `run ${snapshot.runId}${snapshot.resumed ? ' (resumed)' : ''}` : 'starting';
  const state = snapshot.status === 'running' ? `${running} running` : snapshot.status;
  // The run id last: on a narrow terminal it is what gets cut.
  return `${done} of ${total} problems done, ${state}  ${formatClock(nowMs - snapshot.startedAtMs)}  ${formatTokens(tokens)} tok  ${formatUsd(cost)}  ${run}`;
}

/**
 * One frame of the live view, fitted to the terminal: a summary line (n of N problems done, the
 * run's time, tokens and cost), a table header, one row per problem, and where not every problem
 * fits, a line counting the others. No line is wider than `columns - 1` (so none wraps) and there
 * are at most `rows - 1` lines (so the frame never scrolls the screen and can always be redrawn).
 */
export function renderProgressFrame(snapshot: RunProgressSnapshot, size: FrameSize, nowMs: number, colors: Colors): string[] {
  const width = Math.max(20, size.columns - 1);
  const height = Math.max(3, size.rows - 1);
  const lines: string[] = [colors.bold(cut(summaryLine(snapshot, nowMs), width))];
  if (snapshot.note && lines.length < height - 2) lines.push(colors.yellow(cut(snapshot.note, width)));
  const problems = snapshot.problems;
  const waiting = Math.max(0, snapshot.total - problems.length);
  const allFit = problems.length + 1 <= height - lines.length && waiting === 0;
  const room = height - lines.length - 1 - (allFit ? 0 : 1);
  const shown = visibleProblems(problems, room);
  const columns = layout(width, shown, nowMs);
  const row = (cells: string[]): string => cut(cells.join(GAP).replace(/\u00a0+$/, ''), width);
  if (room > 0 || shown.length > 0) lines.push(colors.dim(row(columns.map((column) => fit(column.header, column.size, column.right)))));
  for (const problem of shown) {
    const text = row(columns.map((column) => fit(column.cell(problem, nowMs), column.size, column.right)));
    lines.push(problem.status === 'done' ? colors.dim(text) : text);
  }
  const hidden = problems.filter((problem) => !shown.includes(problem));
  if (hidden.length + waiting > 0) {
    const hiddenDone = hidden.filter((problem) => problem.status === 'done').length;
    const counts: Array<[number, string]> = [
      [hiddenDone, 'done'],
      [hidden.length - hiddenDone, 'running'],
      [waiting, 'waiting'],
    ];
    const parts = counts.filter(([count]) => count > 0).map(([count, what]) => `${count} ${what}`);
    lines.push(colors.dim(cut(`… ${hidden.length + waiting} more problems: ${parts.join(', ')}`, width)));
  }
  return lines.slice(0, height);
}
