import type { EvaluationResult } from '../../core/verdict.js';

/** What the guard reported about a candidate (docs/guard.md), in the shape the page shows. */
export interface GuardDetails {
  policy: string | null;
  /** Static findings on the sources: `reject` ones decided the verdict, `note` ones did not. */
  findings: Array<{ check: string; severity: string; message: string; line: number | null }>;
  /** Run-time checks by stage: `passed`, `skipped` or `note`. */
  checks: Array<{ stage: string; check: string; status: string; message: string }>;
  /** Sentences that change no verdict but that a person should read. */
  notes: string[];
}

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const records = (value: unknown): Array<Record<string, unknown>> => (Array.isArray(value) ? value.filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object') : []);

/** The guard's report of a result, or null when the evaluator sent none. */
export function guardDetails(result: EvaluationResult): GuardDetails | null {
  const guard = result.guard;
  if (!guard) return null;
  return {
    policy: typeof guard.policy === 'string' ? guard.policy : null,
    findings: records(guard.findings).map((finding) => ({
      check: text(finding.check, 'guard'),
      severity: text(finding.severity, 'note'),
      message: text(finding.message),
      line: typeof finding.line === 'number' ? finding.line : null,
    })),
    checks: records(guard.checks).map((check) => ({ stage: text(check.stage), check: text(check.check), status: text(check.status), message: text(check.message) })),
    notes: Array.isArray(guard.notes) ? guard.notes.filter((note): note is string => typeof note === 'string') : [],
  };
}
