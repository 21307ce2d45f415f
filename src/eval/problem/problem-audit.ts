import { z } from 'zod';

/**
 * What `python3 -m kforge_worker audit PROBLEM` prints (docs/worker-protocol.md, "The audit
 * command"), and the findings kforge draws from it.
 */

const trivialOutputSchema = z.object({
  applicable: z.boolean(),
  passes: z.boolean(),
  max_abs_error: z.number().nullable(),
  relative_l2_error: z.number().nullable(),
});

/** One tensor of a call, as the audit measured it at the problem's preset. */
export const tensorSizeSchema = z.object({ shape: z.array(z.number().int().nonnegative()), dtype: z.string(), bytes: z.number().int().nonnegative() });
export type TensorSize = z.infer<typeof tensorSizeSchema>;

/** A problem the worker could audit: whether a trivial output passes its tolerance. */
export const workerAuditSchema = z.looseObject({
  problem: z.string(),
  preset: z.string().nullable(),
  precision: z.string(),
  device: z.string(),
  seeds: z.array(z.number().int()),
  /** Some trivial output (zeros, the reference's mean, ones, the input) passes in every trial. */
  degenerate: z.boolean(),
  passing: z.array(z.string()),
  /** Trivial outputs that are exactly right: the problem cannot tell a kernel from a constant. */
  exact_trivial: z.array(z.string()),
  scale_aware_threshold: z.number(),
  atol: z.number(),
  rtol: z.number(),
  /** `problem` where atol/rtol are the problem's own declaration for `tolerance_dtype` (absent from an older worker). */
  tolerance_source: z.enum(['profile', 'problem']).optional(),
  tolerance_dtype: z.string().nullable().optional(),
  trials: z.number().int(),
  trivial: z.record(z.string(), trivialOutputSchema),
  /** The forward's tensor arguments of the first trial, in order (absent from an older worker). */
  inputs: z.array(tensorSizeSchema).optional(),
  /** The reference's output tensors of the first trial. */
  outputs: z.array(tensorSizeSchema).optional(),
});
export type WorkerAudit = z.infer<typeof workerAuditSchema>;

/** A problem the worker could not audit (exit status 1): it fails to load, make inputs or run. */
export const workerAuditFailureSchema = z.object({
  problem: z.string(),
  error: z.object({ kind: z.string(), check: z.string(), message: z.string() }),
});
export type WorkerAuditFailure = z.infer<typeof workerAuditFailureSchema>;

/** How much a finding matters: `error` makes `kforge problems audit` exit 1. */
export const FINDING_LEVELS = ['error', 'warning', 'note'] as const;
export type FindingLevel = (typeof FINDING_LEVELS)[number];

export interface AuditFinding {
  level: FindingLevel;
  /** Stable id: the worker's check (`problem-load`, `problem-inputs`, `reference-forward`), `degenerate`, `exact-trivial`, `audit-crashed`, `audit-timeout`, `audit-too-slow`. */
  check: string;
  message: string;
}

/** One problem's audit as kforge reports it. */
export interface ProblemAudit {
  /** The problem file, absolute. */
  problemPath: string;
  findings: AuditFinding[];
  /** The worker's audit object; null when the problem could not be audited. */
  audit: WorkerAudit | null;
  /** Wall time of the audit process, in ms. */
  durationMs: number;
}

/** The findings of a successful audit: an exactly right trivial output is an error, a passing one a warning. */
export function findingsOfAudit(audit: WorkerAudit): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const declared = audit.tolerance_source === 'problem' ? `, declared by the problem for ${audit.tolerance_dtype ?? 'its output'}` : '';
  const tolerance = `atol ${audit.atol}, rtol ${audit.rtol}${declared}`;
  if (audit.exact_trivial.length > 0) {
    findings.push({
      level: 'error',
      check: 'exact-trivial',
      message: `a trivial output is exactly the reference (${audit.exact_trivial.join(', ')}) in all ${audit.trials} trials: the problem cannot tell a kernel from a constant; change its inputs or its computation`,
    });
  }
  if (audit.degenerate) {
    findings.push({
      level: 'warning',
      check: 'degenerate',
      message: `a trivial output passes the tolerance (${tolerance}) in all ${audit.trials} trials (${audit.passing.join(', ')}): candidates are judged by the scale-aware metric as well (relative L2 error ≤ ${audit.scale_aware_threshold})`,
    });
  }
  return findings;
}

/** The finding of a problem the worker could not audit. */
export function findingOfFailure(failure: WorkerAuditFailure): AuditFinding {
  return { level: 'error', check: failure.error.check, message: failure.error.message };
}
