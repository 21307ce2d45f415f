import type { Verdict } from '../../core/verdict.js';

/**
 * One colour per verdict, shared by the dashboard and the HTML report so a verdict looks the same
 * everywhere. Chosen to stay apart for the common kinds of colour blindness, with text labels
 * beside them wherever they appear.
 */
export const VERDICT_COLORS: Record<Verdict, string> = {
  correct: '#1a7f37',
  incorrect: '#cf222e',
  rejected: '#8250df',
  runtime_error: '#e16f24',
  timeout: '#b08800',
  crashed: '#82071e',
  compile_error: '#57606a',
  invalid_input: '#8c959f',
};

/** Colour of a candidate not evaluated yet. */
export const PENDING_COLOR = '#afb8c1';

/** Human words for a verdict: `compile_error` → `compile error`. */
export function verdictLabel(verdict: Verdict | null): string {
  return verdict === null ? 'not evaluated' : verdict.replace(/_/g, ' ');
}
