import type picocolors from 'picocolors';
import type { EvaluationResult, ShapeOutcome } from '../../core/verdict.js';
import { formatTextTable } from '../../core/text-table.js';
import { formatMilliseconds, formatSpeedup } from './format.js';

type Colors = ReturnType<typeof picocolors.createColors>;

const figure = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : formatMilliseconds(value));

function valuesText(outcome: ShapeOutcome): string {
  const values = Object.entries(outcome.values).map(([key, value]) => `${key}=${String(value)}`);
  return values.join(', ') + (outcome.unused.length > 0 ? ` (unused: ${outcome.unused.join(', ')})` : '');
}

/**
 * A problem folder's sweep as `kforge eval` prints it (docs/problems.md): one row per shape with
 * its verdict, median times and speedups, the geometric means of a correct sweep, and the first
 * reason of each failing shape whose reasons are not those at the top of the result.
 */
export function renderShapes(result: EvaluationResult, colors: Colors): string[] {
  const shapes = result.shapes;
  if (!shapes || shapes.length === 0) return [];
  const rows = [
    ['shape', 'values', 'verdict', 'median ms', 'eager ms', 'compile ms', 'vs eager', 'vs compile', 'vs best'],
    ...shapes.map((outcome) => {
      const timing = outcome.timing;
      return [
        String(outcome.index),
        valuesText(outcome),
        outcome.verdict,
        timing ? figure(timing.candidate_median_ms) : '',
        timing ? figure(timing.eager_median_ms) : '',
        timing ? figure(timing.compile_median_ms) : '',
        timing ? formatSpeedup(timing.speedup_vs_eager) : '',
        timing ? formatSpeedup(timing.speedup_vs_compile) : '',
        timing ? formatSpeedup(timing.speedup_vs_best) : '',
      ];
    }),
  ];
  const align = ['right', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right'] as const;
  const table = formatTextTable(rows, { align }).map((text, index) => `  ${index === 0 ? colors.dim(text) : text}`);
  const lines = [colors.bold(`shapes (${shapes.length} evaluated)`), ...table];
  const lead = shapes.find((outcome) => outcome.verdict !== 'correct');
  for (const outcome of shapes) {
    const reason = outcome.reasons[0];
    if (outcome === lead || outcome.verdict === 'correct' || !reason) continue;
    lines.push(`  ${colors.dim(`shape ${outcome.index} [${reason.check}]`)} ${reason.message}`);
  }
  if (result.verdict === 'correct' && result.shape_geomean) {
    const geomean = result.shape_geomean;
    lines.push(
      `  ${colors.bold(`geometric mean over ${geomean.shapes} shapes: ${formatSpeedup(geomean.speedup_vs_best)} vs best baseline`)} ` +
        `(${formatSpeedup(geomean.speedup_vs_eager)} vs eager, ${formatSpeedup(geomean.speedup_vs_compile)} vs torch.compile)`,
    );
  }
  return lines;
}
