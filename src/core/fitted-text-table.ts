import { formatTextTable, type ColumnAlignment } from './text-table.js';

/** One column of a table that must fit a terminal's width. */
export interface FittedColumn {
  header: string;
  /** The header when the table does not fit with the full ones (`vs eager` → `eager`). Default: `header`. */
  shortHeader?: string;
  /** One cell per row. */
  cells: readonly string[];
  align?: ColumnAlignment;
  /**
   * Columns with the highest number are dropped first when the table is too wide; without one, a
   * column is never dropped. A droppable column whose every cell is blank (`—` or empty) goes
   * before any other.
   */
  dropOrder?: number;
  /**
   * Cut with `…` to make room (the one column of names): first down to `preferredWidth` cells,
   * before any column is dropped, then down to `minWidth` once every droppable column is gone.
   */
  truncate?: { preferredWidth: number; minWidth: number };
}

const BLANK = new Set(['', '—']);

function lines(columns: readonly FittedColumn[], short: boolean, cutTo: number | null): string[] {
  const header = columns.map((column) => (short ? (column.shortHeader ?? column.header) : column.header));
  const rowCount = Math.max(0, ...columns.map((column) => column.cells.length));
  const rows = Array.from({ length: rowCount }, (_, row) =>
    columns.map((column) => {
      const cell = column.cells[row] ?? '';
      return cutTo !== null && column.truncate && cell.length > cutTo ? `${cell.slice(0, Math.max(0, cutTo - 1))}…` : cell;
    }),
  );
  return formatTextTable([header, ...rows], { align: columns.map((column) => column.align ?? 'left') });
}

const widest = (text: readonly string[]): number => Math.max(0, ...text.map((line) => line.length));

/**
 * Aligned text lines (a header, then the rows) no wider than `widthColumns` where that can be
 * done: the table as it is when it fits; else with short headers; then without its droppable
 * columns that hold nothing; then with long names cut to their preferred width; then dropping
 * columns by `dropOrder`; then cutting names further. A table that cannot fit even so comes out
 * as narrow as it could be made.
 *
 * @example fitTextTable([{ header: 'problem', cells: ['01_relu'] }, { header: 'vs eager', shortHeader: 'eager', cells: ['1.50x'], align: 'right', dropOrder: 1 }], 80)
 */
export function fitTextTable(columns: readonly FittedColumn[], widthColumns: number): string[] {
  const full = lines(columns, false, null);
  if (widest(full) <= widthColumns) return full;
  let kept = [...columns];
  const attempt = (cutTo: number | null): string[] => lines(kept, true, cutTo);
  let fitted = attempt(null);
  if (widest(fitted) <= widthColumns) return fitted;
  kept = kept.filter((column) => column.dropOrder === undefined || !column.cells.every((cell) => BLANK.has(cell)));
  fitted = attempt(null);
  if (widest(fitted) <= widthColumns) return fitted;
  const truncated = kept.find((column) => column.truncate);
  const preferred = truncated?.truncate?.preferredWidth ?? null;
  fitted = attempt(preferred);
  while (widest(fitted) > widthColumns && kept.some((column) => column.dropOrder !== undefined)) {
    const drop = Math.max(...kept.flatMap((column) => (column.dropOrder === undefined ? [] : [column.dropOrder])));
    kept = kept.filter((column) => column.dropOrder !== drop);
    fitted = attempt(preferred);
  }
  if (widest(fitted) <= widthColumns || !truncated?.truncate) return fitted;
  const over = widest(fitted) - widthColumns;
  const nameWidth = Math.max(truncated.header.length, ...truncated.cells.map((cell) => Math.min(cell.length, preferred ?? cell.length)));
  return attempt(Math.max(truncated.truncate.minWidth, nameWidth - over));
}
