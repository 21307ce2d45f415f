import type { EvaluationResult, Reason, Verdict } from '../../core/verdict.js';

/** How an evaluation ended, before the result object around it is assembled. */
export interface Outcome {
  verdict: Verdict;
  reasons: Reason[];
  /** Diagnostics fields beyond stdout/stderr (compiler output, first error, known cause, traceback). */
  diagnostics?: Omit<Partial<EvaluationResult['diagnostics']>, 'stdout' | 'stderr'>;
}

/** An outcome with one reason. */
export function outcome(verdict: Verdict, check: string, message: string): Outcome {
  return { verdict, reasons: [{ check, message }] };
}
