import { z } from 'zod';

/**
 * What the sandbox put in place around a worker (worker/kforge_sandbox/report.py), as its `hello`
 * carries it in `environment.isolation` and an evaluation records it in its result's
 * `environment.isolation` (docs/security.md).
 */
export const isolationReportSchema = z
  .object({
    /** False when the sandbox was turned off (`KFORGE_SANDBOX=0`) or the platform has none. */
    enabled: z.boolean(),
    role: z.string(),
    /** Who the candidate runs as, in words (`uid 61234 (no passwd entry)`). */
    user: z.string(),
    /** That uid as the parent sees it; null when it is the parent's own. */
    uid: z.number().int().nonnegative().nullable(),
    namespaces: z.array(z.string()),
    seccomp: z.boolean(),
    no_new_privs: z.boolean(),
    /** `v2`, `v1 pids (pids.max)`, …; null when no cgroup could be made. */
    cgroup: z.string().nullable(),
    filesystem: z.string(),
    network: z.string(),
    python: z.string(),
    descriptors: z.string(),
    /** Each layer not in force, with why (`cgroup: …`); empty when all are. */
    missing: z.array(z.string()),
  })
  .passthrough();
export type IsolationReport = z.infer<typeof isolationReportSchema>;

/** The report in a worker's `hello` environment, or null when it has none or a malformed one. */
export function isolationOf(environment: Record<string, unknown> | null | undefined): IsolationReport | null {
  const parsed = isolationReportSchema.safeParse(environment?.isolation);
  return parsed.success ? parsed.data : null;
}

/**
 * The sentence every verdict carries when the candidate was not fully isolated (null when it was):
 * the machine says what it could not do rather than pretending.
 */
export function isolationNote(report: IsolationReport | null): string | null {
  if (report === null) return "the candidate ran without kforge's sandbox report: its isolation is unknown (docs/security.md)";
  if (!report.enabled)
    return `the candidate ran without isolation (${report.missing.join('; ')}): it could reach the caches, the store and other processes of its user (docs/security.md)`;
  if (report.missing.length === 0) return null;
  return `the candidate's isolation is partial on this machine: ${report.missing.join('; ')} (docs/security.md)`;
}
