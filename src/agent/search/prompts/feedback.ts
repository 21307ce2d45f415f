import type { EvaluationResult, TimingStats, TrialDetail } from '../../../core/verdict.js';
import { formatMs, formatSignificant, formatSpeedup } from '../../../core/number-format.js';

export interface FeedbackOptions {
  /** Longest message in characters; longer parts are cut with a marker. Default 3000. */
  maxChars?: number;
  /** Lines of compiler output kept around the first error. Default 8. */
  compilerContextLines?: number;
  /** Last lines of a traceback or of stderr kept. Default 12. */
  tailLines?: number;
}

const VERDICT_SENTENCES: Record<EvaluationResult['verdict'], string> = {
  correct: 'correct: it built, ran and matched the reference on every trial.',
  incorrect: 'incorrect: it ran, but its output differs from the reference beyond tolerance.',
  compile_error: 'compile_error: it did not build.',
  runtime_error: 'runtime_error: it raised an error while running.',
  timeout: 'timeout: a stage ran past its time limit and was killed.',
  crashed: 'crashed: the process died.',
  rejected: 'rejected: the guard found the result dishonest.',
  invalid_input: 'invalid_input: the file itself is unusable.',
};

/**
 * Trims an evaluation into what helps the next turn: the first compiler error with its line and
 * known cause, where and how much outputs differ, the runtime error, the guard's reasons, and
 * timings against eager and `torch.compile` with their intervals. Plain text, at most `maxChars`.
 */
export function summarizeEvaluation(result: EvaluationResult, options: FeedbackOptions = {}): string {
  const maxChars = options.maxChars ?? 3000;
  const parts = [`Verdict: ${VERDICT_SENTENCES[result.verdict]}`];
  parts.push(...reasonLines(result));
  if (result.verdict === 'compile_error') parts.push(...compilerLines(result, options.compilerContextLines ?? 8));
  if (result.verdict === 'incorrect') parts.push(...mismatchLines(result));
  if (['runtime_error', 'crashed', 'timeout', 'invalid_input'].includes(result.verdict)) {
    parts.push(...tracebackLines(result, options.tailLines ?? 12));
  }
  if (result.shapes && result.shapes.length > 0) parts.push(...shapeLines(result));
  else if (result.verdict === 'correct') parts.push(...timingLines(result));
  return clip(parts.join('\n'), maxChars);
}

/** A problem folder's sweep: each shape's verdict (its time and speedup when correct, else its first reason), and the geometric mean. */
function shapeLines(result: EvaluationResult): string[] {
  const lines = ['Shapes:'];
  for (const shape of result.shapes ?? []) {
    const values = Object.entries(shape.values)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(', ');
    const timing = shape.timing;
    const reason = shape.reasons[0];
    const detail = timing
      ? `, ${formatMs(timing.candidate_median_ms)}, speedup ${formatSpeedup(timing.speedup_vs_best)} against the best baseline`
      : reason
        ? ` [${reason.check}] ${reason.message}`
        : '';
    lines.push(`- shape ${shape.index} (${values}): ${shape.verdict}${detail}`);
  }
  if (result.verdict === 'correct' && result.shape_geomean) {
    lines.push(`- geometric mean over the shapes: speedup ${formatSpeedup(result.shape_geomean.speedup_vs_best)} against the best baseline`);
  }
  return lines;
}

function reasonLines(result: EvaluationResult): string[] {
  if (result.reasons.length === 0) return [];
  const heading = result.verdict === 'rejected' ? 'The guard rejected it:' : 'Reasons:';
  return [heading, ...result.reasons.map((reason) => `- [${reason.check}] ${reason.message}`)];
}

/** The compiler's first error line, found in the full output where the evaluator did not pick it. */
export function firstCompilerError(compilerOutput: string): { line: string; index: number } | null {
  const lines = compilerOutput.split('\n');
  const patterns = [/\berror\b/i, /\bfatal\b/i, /undefined reference/i];
  for (const pattern of patterns) {
    const index = lines.findIndex((line) => pattern.test(line));
    if (index >= 0) return { line: lines[index]!.trim(), index };
  }
  return null;
}

/** `file.cpp:12:5: error: …` → `12`; null when the line names no position. */
export function sourceLineOf(compilerLine: string): number | null {
  const match = /:(\d+)(?::\d+)?:\s*(?:fatal\s+)?error/i.exec(compilerLine) ?? /\((\d+)\):\s*error/i.exec(compilerLine);
  return match ? Number(match[1]) : null;
}

function compilerLines(result: EvaluationResult, contextLines: number): string[] {
  const compiler = result.diagnostics.compiler ?? '';
  const found = firstCompilerError(compiler);
  const first = result.diagnostics.first_error ?? found?.line;
  const lines: string[] = [];
  if (first) {
    const line = sourceLineOf(first);
    lines.push(`First compiler error${line === null ? '' : ` (line ${line} of the generated source)`}: ${first}`);
  }
  if (result.diagnostics.known_cause) lines.push(`Known cause: ${result.diagnostics.known_cause}`);
  if (found && contextLines > 0) {
    const all = compiler.split('\n');
    const excerpt = all.slice(Math.max(0, found.index - 2), found.index + contextLines - 1);
    lines.push('Compiler output around it:', ...excerpt.map((text) => `  ${text}`));
  } else if (!first && compiler.trim()) {
    lines.push('Compiler output (end):', ...lastLines(compiler, contextLines).map((text) => `  ${text}`));
  }
  return lines;
}

function mismatchLines(result: EvaluationResult): string[] {
  const correctness = result.correctness;
  if (!correctness) return [];
  const lines = [`Trials passed: ${correctness.passed} of ${correctness.trials}.`];
  const figures: string[] = [];
  if (correctness.max_abs_error !== null) figures.push(`max abs error ${formatSignificant(correctness.max_abs_error)}`);
  if (correctness.max_rel_error !== null) figures.push(`max rel error ${formatSignificant(correctness.max_rel_error)}`);
  if (correctness.mismatch_count !== undefined) figures.push(`${correctness.mismatch_count} elements outside tolerance`);
  if (correctness.atol !== undefined && correctness.rtol !== undefined) {
    const declared = correctness.tolerance_source === 'problem' ? ` (declared by the problem for ${correctness.tolerance_dtype ?? 'its output'})` : '';
    figures.push(`tolerance atol=${correctness.atol} rtol=${correctness.rtol}${declared}`);
  }
  if (figures.length > 0) lines.push(`Error: ${figures.join(', ')}.`);
  const failed = (correctness.trial_details ?? []).filter((trial) => !trial.passed).slice(0, 2);
  for (const trial of failed) lines.push(`- ${describeTrial(trial)}`);
  return lines;
}

function describeTrial(trial: TrialDetail): string {
  // A problem folder's sweep marks each trial with its shape.
  const parts = [...(typeof trial.shape === 'number' ? [`shape ${trial.shape}`] : []), `seed ${trial.seed}`];
  if (typeof trial.check === 'string') parts.push(trial.check);
  const mismatched = trial.mismatch_count;
  const total = trial.numel;
  if (typeof mismatched === 'number' && typeof total === 'number') parts.push(`${mismatched} of ${total} elements differ`);
  if (typeof trial.max_abs_error === 'number') parts.push(`max abs ${formatSignificant(trial.max_abs_error)}`);
  const message = typeof trial.message === 'string' ? `: ${trial.message}` : '';
  return `${parts.join(', ')}${message}`;
}

function tracebackLines(result: EvaluationResult, tailLines: number): string[] {
  const { traceback, stderr } = result.diagnostics;
  if (traceback?.trim()) return ['Traceback (last lines):', ...lastLines(traceback, tailLines).map((line) => `  ${line}`)];
  if (stderr.trim()) return ['Standard error (last lines):', ...lastLines(stderr, tailLines).map((line) => `  ${line}`)];
  return [];
}

function describeStats(label: string, stats: TimingStats): string {
  return `${label} ${formatMs(stats.median)} median, 95% CI [${formatSignificant(stats.ci95[0])}, ${formatSignificant(stats.ci95[1])}] ms, n=${stats.n}`;
}

function timingLines(result: EvaluationResult): string[] {
  const timing = result.timing;
  if (!timing) return [];
  const lines = ['Timing:', `- ${describeStats('candidate', timing.candidate_ms)}`];
  if (timing.eager_ms) lines.push(`- ${describeStats('eager PyTorch', timing.eager_ms)}: speedup ${formatSpeedup(timing.speedup_vs_eager)}`);
  if (timing.compile_ms) {
    lines.push(`- ${describeStats('torch.compile', timing.compile_ms)}: speedup ${formatSpeedup(timing.speedup_vs_compile)}`);
  } else if (timing.compile_unavailable) {
    lines.push(`- torch.compile: not measured (${timing.compile_unavailable})`);
  }
  lines.push(`- speedup against the best baseline: ${formatSpeedup(timing.speedup_vs_best)}`);
  return lines;
}

function lastLines(text: string, count: number): string[] {
  return text.trimEnd().split('\n').slice(-count);
}

function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = '\n[… feedback cut …]';
  return text.slice(0, Math.max(0, maxChars - marker.length)) + marker;
}
