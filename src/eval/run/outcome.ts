import type { EvaluationResult, Reason, Verdict } from '../../core/verdict.js';

/** How an evaluation ended, before the result object around it is assembled. */
export interface Outcome {
  verdict: Verdict;
  reasons: Reason[];
  /** Diagnostics fields beyond stdout/stderr (compiler output, first error, known cause, traceback). */
  diagnostics?: Omit<Partial<EvaluationResult['diagnostics']>, 'stdout' | 'stderr'>;
}

/** A step of an evaluation: its value, or the outcome the evaluation ends with. */
export type Step<T> = { ok: true; value: T } | { ok: false; outcome: Outcome };

/** An outcome with one reason. */
export function outcome(verdict: Verdict, check: string, message: string): Outcome {
  return { verdict, reasons: [{ check, message }] };
}
