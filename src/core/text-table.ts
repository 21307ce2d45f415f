/** How a column's cells line up. */
export type ColumnAlignment = 'left' | 'right';

export interface TextTableOptions {
  /** Per column; default `left` for all. */
  align?: readonly ColumnAlignment[];
  /** Spaces between columns. Default 2. */
  gap?: number;
}

/**
 * Rows of cells as aligned text lines (the first row is usually the header), each line without
 * trailing spaces; a last left-aligned column is not padded. Widths count UTF-16 units, which is
 * right for the ASCII figures and names these tables hold. Kept by hand on purpose: the table
 * libraries (cli-table3, columnify) draw borders or wrap cells, and these are ten lines.
 *
 * @example formatTextTable([['name', 'ms'], ['relu', '0.52']], { align: ['left', 'right'] })
 */
export function formatTextTable(rows: readonly (readonly string[])[], options: TextTableOptions = {}): string[] {
  const count = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: count }, (_, column) => Math.max(0, ...rows.map((row) => (row[column] ?? '').length)));
  const gap = ' '.repeat(options.gap ?? 2);
  return rows.map((row) =>
    row
      .map((cell, column) => {
        if (options.align?.[column] === 'right') return cell.padStart(widths[column]!);
        return column === row.length - 1 ? cell : cell.padEnd(widths[column]!);
      })
      .join(gap)
      .trimEnd(),
  );
}
