import type { z } from 'zod';
import type { EvaluationResult } from '../../core/verdict.js';
import type { guardDetailsSchema } from '../api-schemas/candidate-schemas.js';

/** What the guard reported about a candidate (docs/guard.md), in the shape the page shows. */
export type GuardDetails = z.infer<typeof guardDetailsSchema>;

/** The guard's report of a result (src/core/guard-report.ts), or null when the evaluator sent none. */
export function guardDetails(result: EvaluationResult): GuardDetails | null {
  const guard = result.guard;
  if (!guard) return null;
  return {
    policy: guard.policy,
    findings: guard.findings.map(({ check, severity, message, line }) => ({ check, severity, message, line: line ?? null })),
    checks: guard.checks.map(({ stage, check, status, message }) => ({ stage, check, status, message })),
    notes: guard.notes,
  };
}
