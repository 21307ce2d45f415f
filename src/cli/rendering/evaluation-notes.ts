import type { EvaluationResult } from '../../core/verdict.js';

/** A value with enough digits to tell two close floats apart: `0.1234568`, `-3.5e-7`, `nan`. */
function formatValue(value: number | string): string {
  if (typeof value === 'string') return value;
  if (value === 0 || Number.isInteger(value)) return String(value);
  return Math.abs(value) < 1e-4 || Math.abs(value) >= 1e6 ? value.toExponential(6) : String(Number(value.toPrecision(7)));
}

/**
 * `first mismatch: trial 1 (seed 42), output[0, 3]: expected 0.25, got 1.5 (difference 1.25)` for
 * the first failing trial that names one; null when none does (no mismatch, or an older worker).
 */
export function firstMismatchLine(result: EvaluationResult): string | null {
  const trials = result.correctness?.trial_details ?? [];
  const position = trials.findIndex((trial) => !trial.passed && trial.first_mismatch);
  const trial = trials[position];
  const first = trial?.first_mismatch;
  if (!trial || !first) return null;
  const leaf = first.leaf === null || first.leaf === undefined ? 'output' : `output leaf ${first.leaf}`;
  const difference =
    typeof first.expected === 'number' && typeof first.actual === 'number' ? ` (difference ${formatValue(first.actual - first.expected)})` : '';
  const seed = ` (seed ${trial.seed})`;
  // A problem folder's sweep marks each trial with its shape (docs/problems.md): counted within it.
  const shape = typeof trial.shape === 'number' ? trial.shape : null;
  const number = shape === null ? position + 1 : trials.slice(0, position + 1).filter((each) => each.shape === shape).length;
  return `${shape === null ? '' : `shape ${shape}, `}trial ${number}${seed}, ${leaf}[${first.index.join(', ')}]: expected ${formatValue(first.expected)}, got ${formatValue(first.actual)}${difference}`;
}

/**
 * What the guard wants a person to read beside the verdict: its notes (a problem the audit found
 * trivial, a time near the speed of light, a failure at other sizes) and, when the problem's
 * tolerance lets a trivial output pass, that the outputs were judged by a scale-aware metric.
 */
export function guardNoteLines(result: EvaluationResult): string[] {
  const guard = result.guard;
  if (!guard) return [];
  const notes = [...guard.notes];
  const audit = guard.audit;
  if (audit?.degenerate === true && audit.passing.length > 0) {
    notes.push(`the problem's tolerance lets a trivial output pass (${audit.passing.join(', ')}), so the outputs were also judged by their relative L2 error`);
  }
  return notes;
}

/** Lines torch prints on import that say nothing about the candidate (kept in the JSON's `stderr`, left out of the summary). */
const NOISE = [/^No CUDA runtime is found, using CUDA_HOME=/];

/** A process's output without torch's import-time noise. */
export function withoutNoise(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !NOISE.some((pattern) => pattern.test(line)))
    .join('\n');
}
