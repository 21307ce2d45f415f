import { z } from 'zod';

/**
 * The guard's report, the result's `guard` field (docs/spec.md section 6, docs/guard.md), and its
 * parts as the worker sends them (docs/worker-protocol.md: `guard`, `guard-checks`, `audit`,
 * `roofline`). The protocol's message schemas (src/eval/process/protocol.ts) are built from these, the
 * evaluator assembles the report from them (src/eval/run/guard-outcome.ts), and the store, the API,
 * the dashboard and the reports read it through these types.
 */

/** One finding of the static guard on the candidate's sources; `reject` findings fail the build stage. */
export const guardFindingSchema = z
  .object({
    check: z.string().min(1),
    severity: z.enum(['reject', 'note']),
    message: z.string(),
    /** Its line in the candidate, where it has one. */
    line: z.number().int().nullable().optional(),
  })
  .catchall(z.unknown());
export type GuardFinding = z.infer<typeof guardFindingSchema>;

/** The outcome of one run-time check (the worker's statuses: `passed`, `skipped`, `note`; a failed check is a `failure`). */
export const guardCheckSchema = z.object({ check: z.string(), status: z.string(), message: z.string() }).catchall(z.unknown());
export type GuardCheck = z.infer<typeof guardCheckSchema>;

/** A run-time check in the report: the stage whose `guard-checks` message carried it. */
export const stagedGuardCheckSchema = guardCheckSchema.extend({ stage: z.string() });
export type StagedGuardCheck = z.infer<typeof stagedGuardCheckSchema>;

/** Whether trivial outputs (zeros, the mean, …) pass the problem's tolerance (docs/hacks.md #12). */
export const toleranceAuditSchema = z
  .object({
    degenerate: z.boolean(),
    passing: z.array(z.string()),
    exact_trivial: z.array(z.string()),
    scale_aware_threshold: z.number().nullable().optional(),
  })
  .catchall(z.unknown());
export type ToleranceAudit = z.infer<typeof toleranceAuditSchema>;

/** Bytes and FLOPs of the reference and the bound they give, in ms (null where unknown; docs/hacks.md #16). */
export const speedOfLightSchema = z.object({
  bytes: z.number().nonnegative().nullable(),
  flops: z.number().nonnegative().nullable(),
  lower_bound_ms: z.number().nonnegative().nullable(),
  /** bound ÷ measured median: 1 means the candidate runs at the bound (null when either is unknown). */
  share_of_bound: z.number().nullable(),
});
export type SpeedOfLight = z.infer<typeof speedOfLightSchema>;

/** One trial at other problem sizes (`--shapes`): the module constants it changed and whether it passed. */
export const generalisationTrialSchema = z.object({
  variant: z.record(z.string(), z.number()),
  seed: z.number().int().nonnegative(),
  passed: z.boolean(),
  /** Why it failed (null when it passed). */
  message: z.string().nullable(),
});
export type GeneralisationTrial = z.infer<typeof generalisationTrialSchema>;

/** Trials at other problem sizes, and whether a failing one rejects (`--shapes-gate`). */
export const generalisationReportSchema = z.object({
  gated: z.boolean(),
  trials: z.array(generalisationTrialSchema),
});
export type GeneralisationReport = z.infer<typeof generalisationReportSchema>;

/** What the guard found, as it goes into the result's `guard` field. */
export const guardReportSchema = z.object({
  /** The policy the static guard ran under (null when no `guard` message arrived); stored runs may hold an alias (`default`). */
  policy: z.string().nullable(),
  /** Static findings, rejections and notes, with their line in the candidate. */
  findings: z.array(guardFindingSchema),
  /** Run-time checks per stage, as the worker reported them. */
  checks: z.array(stagedGuardCheckSchema),
  /** Whether trivial outputs pass this problem's tolerance. */
  audit: toleranceAuditSchema.nullable(),
  /** The speed-of-light bound of the reference's work on this device. */
  speed_of_light: speedOfLightSchema.nullable(),
  /** Trials at other problem sizes (`--shapes`), with the gate's effect. */
  generalisation: generalisationReportSchema.nullable(),
  /** Sentences that change no verdict but that a person should read. */
  notes: z.array(z.string()),
});
export type GuardReport = z.infer<typeof guardReportSchema>;
