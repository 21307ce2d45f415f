import path from 'node:path';
import type picocolors from 'picocolors';
import { measuringPolicy } from '../../core/measuring-policy.js';
import type { EvaluationResult, TimingStats, Verdict } from '../../core/verdict.js';
import { attributionLine } from '../../eval/run/attribution-report.js';
import { timingNotes } from './render-timing-notes.js';
import { renderShapes } from './render-shapes.js';
import { shapeLabel } from '../../eval/problem/problem-folder.js';
import { formatTextTable } from '../../core/text-table.js';
import { compilerErrorExcerpt } from './compiler-excerpt.js';
import { firstMismatchLine, guardNoteLines, withoutNoise } from './evaluation-notes.js';
import { formatDuration, formatError, formatMilliseconds, formatProblemName, formatSpeedup } from './format.js';

type Colors = ReturnType<typeof picocolors.createColors>;

const VERDICT_COLOR: Record<Verdict, 'green' | 'red' | 'yellow' | 'magenta'> = {
  correct: 'green',
  incorrect: 'red',
  compile_error: 'red',
  runtime_error: 'red',
  timeout: 'yellow',
  crashed: 'magenta',
  rejected: 'red',
  invalid_input: 'yellow',
};

/** Stage names in the order they run. */
const STAGE_ORDER = ['reference', 'baseline', 'build', 'load', 'correctness', 'judge', 'timing'];

/** Lines of a process's output shown when something failed. */
const TAIL_LINES = 12;

/**
 * The human summary of `kforge eval`: verdict, reasons, the compiler's first error and its known
 * cause, the error profile, a timing table and per-stage wall times.
 */
export function renderEvaluation(result: EvaluationResult, colors: Colors): string {
  const lines: string[] = [];
  const verdict = colors.bold(colors[VERDICT_COLOR[result.verdict]](result.verdict));
  const problem = formatProblemName(result.problem);
  lines.push(
    `${verdict}  ${path.basename(result.candidate)} against ${problem}  ` +
      colors.dim(`(${result.backend}, ${result.precision}${result.preset ? `, preset ${result.preset}` : ''})`),
  );
  for (const reason of result.reasons) lines.push(`  ${colors.dim(`[${reason.check}]`)} ${reason.message}`);
  const measuring = measuringPolicy(result);
  if (measuring) lines.push(`  ${colors.bold('to measure it as it is:')} run again with --guard-policy ${measuring} (docs/guard.md, "Policies")`);
  if (result.attribution) {
    const policy = result.guard?.policy ? colors.dim(` (policy ${result.guard.policy})`) : '';
    lines.push(`${colors.bold('attribution:')} ${attributionLine(result.attribution)}${policy}`);
  }
  const { diagnostics } = result;
  const mismatch = firstMismatchLine(result);
  if (mismatch) lines.push(`  ${colors.bold('first mismatch:')} ${mismatch}`);
  const excerpt = result.verdict === 'compile_error' ? compilerErrorExcerpt(diagnostics.compiler) : null;
  if (excerpt) lines.push('', colors.bold('first compiler error:'), ...excerpt.map((line) => `  ${line}`));
  else if (diagnostics.first_error) lines.push('', `${colors.bold('first compiler error:')} ${diagnostics.first_error}`);
  if (diagnostics.known_cause) lines.push(`${colors.bold('known cause:')} ${diagnostics.known_cause}`);
  if (result.verdict === 'runtime_error' && diagnostics.traceback) {
    lines.push('', colors.bold('traceback (last lines):'), ...tail(diagnostics.traceback).map((line) => `  ${line}`));
  }
  const stderr = withoutNoise(diagnostics.stderr);
  if (result.verdict !== 'correct' && result.verdict !== 'incorrect' && stderr.trim()) {
    lines.push('', colors.bold('stderr (last lines):'), ...tail(stderr).map((line) => `  ${colors.dim(line)}`));
  }
  const notes = guardNoteLines(result);
  if (notes.length > 0) lines.push('', colors.bold('guard notes:'), ...notes.map((note) => `  ${note}`));
  if (result.correctness) lines.push('', ...renderCorrectness(result, colors));
  if (result.timing) lines.push('', ...renderTiming(result, colors));
  const shapes = renderShapes(result, colors);
  if (shapes.length > 0) lines.push('', ...shapes);
  const stages = renderStages(result.stages ?? {});
  if (stages) lines.push('', `${colors.bold('stages:')} ${stages}`);
  if (result.environment) {
    const environment = result.environment;
    const parts = [environment.device, `torch ${environment.torch}`];
    if (environment.cuda) parts.push(`CUDA ${environment.cuda}`);
    if (environment.driver) parts.push(`driver ${environment.driver}`);
    if (environment.python) parts.push(`python ${environment.python}`);
    lines.push(`${colors.bold('environment:')} ${parts.join(' · ')}`);
  }
  return `${lines.join('\n')}\n`;
}

function renderCorrectness(result: EvaluationResult, colors: Colors): string[] {
  const correctness = result.correctness!;
  const tolerance = correctness.atol === correctness.rtol ? `atol=rtol=${correctness.atol}` : `atol=${correctness.atol}, rtol=${correctness.rtol}`;
  const lines = [
    `${colors.bold('error profile:')} ${correctness.passed}/${correctness.trials} trials passed, ` +
      `max abs error ${formatError(correctness.max_abs_error)}, max rel error ${formatError(correctness.max_rel_error)}` +
      (correctness.mismatch_count ? `, ${correctness.mismatch_count} elements outside tolerance` : '') +
      colors.dim(` (${toleranceOrigin(correctness)}: ${tolerance})`),
  ];
  if (correctness.fp64) {
    const twin = correctness.high_precision_dtype === 'float32' ? 'float32 (no float64 kernel for an operator)' : 'float64';
    lines.push(`  against ${twin}: max abs error ${formatError(correctness.fp64.max_abs_error)}, max rel error ${formatError(correctness.fp64.max_rel_error)}`);
  }
  return lines;
}

/** `kernelbench`, or where the problem declared its own: `declared by the problem for bfloat16`. */
function toleranceOrigin(correctness: NonNullable<EvaluationResult['correctness']>): string {
  if (correctness.tolerance_source === 'problem') return `declared by the problem for ${correctness.tolerance_dtype ?? 'its output'}`;
  return correctness.tolerance ?? 'kernelbench';
}

function renderTiming(result: EvaluationResult, colors: Colors): string[] {
  // A problem folder's sweep: the statistics are its first shape's, and so are the speedups of this
  // table; the top-level speedups are the geometric means, shown with the shapes (docs/problems.md).
  const first = result.shapes?.[0];
  const sweep = first?.timing ? { label: first, speedups: first.timing } : null;
  const timing = sweep ? { ...result.timing!, ...sweep.speedups } : result.timing!;
  const row = (name: string, stats: TimingStats | null, speedup: string, note?: string): string[] => {
    if (!stats) return [name, '—', '', '', note ?? 'not measured'];
    return [name, formatMilliseconds(stats.median), `[${formatMilliseconds(stats.ci95[0])}, ${formatMilliseconds(stats.ci95[1])}]`, String(stats.n), speedup];
  };
  const rows = [
    ['', 'median ms', '95% CI', 'n', 'candidate speedup'],
    row('candidate', timing.candidate_ms, ''),
    row('eager', timing.eager_ms, formatSpeedup(timing.speedup_vs_eager), timing.eager_unavailable),
    row('torch.compile', timing.compile_ms, formatSpeedup(timing.speedup_vs_compile), timing.compile_unavailable),
  ];
  const table = formatTextTable(rows).map((text, index) => `  ${index === 0 ? colors.dim(text) : text}`);
  const cached = timing.baseline_cached ? colors.dim(' (baselines from the cache)') : '';
  const of = sweep ? ` of ${shapeLabel(sweep.label)}` : '';
  return [
    `${colors.bold(`timing${of}`)}${cached}`,
    ...table,
    `  ${colors.bold(`speedup vs best baseline${of}: ${formatSpeedup(timing.speedup_vs_best)}`)}`,
    ...timingNotes(timing, colors),
  ];
}

function renderStages(stages: Record<string, number>): string {
  const names = Object.keys(stages).sort((a, b) => rank(a) - rank(b));
  return names.map((name) => `${name} ${formatDuration(stages[name]!)}`).join(' · ');
}

function rank(stage: string): number {
  const index = STAGE_ORDER.indexOf(stage);
  return index === -1 ? STAGE_ORDER.length : index;
}

function tail(text: string): string[] {
  const lines = text.trimEnd().split(/\r?\n/);
  return lines.slice(-TAIL_LINES);
}
