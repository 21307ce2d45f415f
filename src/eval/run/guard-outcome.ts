import type { GeneralisationReport, GuardReport, StagedGuardCheck } from '../../core/guard-report.js';
import type { Attribution, Reason } from '../../core/verdict.js';
import { applySubstitution, buildAttribution } from './attribution-report.js';
import type { Outcome } from './outcome.js';
import type { GeneralisationOutput, MessageOfType } from '../process/protocol.js';

/** The report's types live in src/core (the verdict's schema); re-exported for the evaluator's readers. */
export type { GeneralisationReport, GuardReport, SpeedOfLight } from '../../core/guard-report.js';

/**
 * Below this share of the speed-of-light bound a timing is physically impossible and rejected; between
 * it and the bound it is noted (docs/guard.md, `faster-than-light`).
 */
export const IMPOSSIBLE_SHARE_OF_BOUND = 0.5;

/** Gathers the guard's messages; turns them into the result's report and into verdicts where they decide one. */
export class GuardRecorder {
  #guard: MessageOfType<'guard'> | undefined;
  readonly #checks: StagedGuardCheck[] = [];
  #audit: MessageOfType<'audit'> | undefined;
  #roofline: MessageOfType<'roofline'> | undefined;
  #generalisation: GeneralisationReport | null = null;
  #boundShare: number | null = null;
  readonly #notes: string[] = [];
  #attribution: MessageOfType<'attribution'> | undefined;
  #referenceOps: MessageOfType<'reference-ops'> | undefined;

  /** The reference's roofline message, once it arrived (its `input_bytes` and `output_bytes` size the timing stage). */
  get roofline(): MessageOfType<'roofline'> | undefined {
    return this.#roofline;
  }

  /** Records one of the guard's informational messages. */
  record(message: MessageOfType<'guard' | 'guard-checks' | 'audit' | 'roofline' | 'attribution' | 'reference-ops'>): void {
    if (message.type === 'guard') this.#guard = message;
    else if (message.type === 'guard-checks') this.#checks.push(...message.checks.map((check) => ({ ...check, stage: message.stage })));
    else if (message.type === 'audit') this.#audit = message;
    else if (message.type === 'attribution') this.#attribution = message;
    else if (message.type === 'reference-ops') this.#referenceOps = message;
    else this.#roofline = message;
  }

  /**
   * The result's `attribution` (docs/spec.md section 8), and the outcome after the `substituted-op` rule
   * of `policy` (attribution-report.ts). Without an `attribution` message, `own_share` is null and
   * `unavailable` says why: the run-time checks were off, or the candidate ended before its traced call.
   */
  attributed(outcome: Outcome, policy: string): { outcome: Outcome; attribution: Attribution } {
    const guardOff = this.#checks.some((check) => check.check === 'guard-runtime');
    const missing = guardOff
      ? 'the run-time checks were off (KFORGE_GUARD_RUNTIME=off): nothing was traced'
      : 'the candidate ended before its traced correctness call (correctness trial 0), so nothing was measured';
    const attribution = buildAttribution(this.#attribution, this.#referenceOps, missing);
    const judged = applySubstitution(outcome, attribution, policy);
    if (attribution.substituted_ops.length > 0 && judged === outcome) {
      this.#notes.push(
        `PyTorch operators the reference never runs did part of the work: ${attribution.substituted_ops.join(', ')} (attribution.substituted_ops; a rejection under own-kernels and strict)`,
      );
    }
    return { outcome: judged, attribution };
  }

  /**
   * A static rejection's reasons: every `reject` finding of the `guard` message (the worker's
   * failure names only the first).
   */
  staticRejection(outcome: Outcome): Outcome {
    const rejects = (this.#guard?.findings ?? []).filter((finding) => finding.severity === 'reject');
    if (outcome.verdict !== 'rejected' || rejects.length === 0) return outcome;
    if (!rejects.some((finding) => finding.check === outcome.reasons[0]?.check)) return outcome;
    const reasons: Reason[] = rejects.map((finding) => ({
      check: finding.check,
      message: finding.message,
    }));
    return { ...outcome, reasons };
  }

  /**
   * Judged generalisation trials: with the gate on, a failing or raising variant rejects the
   * candidate (`generalisation`); with it off, it is reported only.
   */
  generalisation(entries: readonly GeneralisationOutput[], judgement: MessageOfType<'judgement'> | null, gated: boolean): Outcome | null {
    const judged = judgement?.trials ?? [];
    let next = 0;
    const trials = entries.map((entry) => {
      if (entry.error || entry.path === null) {
        return { variant: entry.variant, seed: entry.seed, passed: false, message: entry.error ?? 'no output was saved' };
      }
      const trial = judged[next++];
      return {
        variant: entry.variant,
        seed: entry.seed,
        passed: trial?.passed === true,
        message: trial?.passed ? null : (trial?.message ?? trial?.check ?? 'not judged'),
      };
    });
    this.#generalisation = { gated, trials };
    const failed = trials.find((trial) => !trial.passed);
    if (!failed) return null;
    const sizes = Object.entries(failed.variant)
      .map(([name, value]) => `${name}=${value}`)
      .join(', ');
    const message = `at other problem sizes (${sizes}) the candidate fails: ${failed.message}; a kernel must be correct at any valid size, not only the benchmark's`;
    if (!gated) {
      this.#notes.push(message);
      return null;
    }
    return { verdict: 'rejected', reasons: [{ check: 'generalisation', message }] };
  }

  /**
   * The speed-of-light check on a timed median (docs/hacks.md #16): under half the bound is impossible
   * (`faster-than-light`, rejected); between half and the bound is noted.
   */
  speedOfLight(medianMs: number): Outcome | null {
    const bound = this.#roofline?.lower_bound_ms ?? null;
    if (bound === null || bound <= 0 || !(medianMs > 0)) return null;
    this.#boundShare = bound / medianMs;
    const claim = `${medianMs.toPrecision(3)} ms against a lower bound of ${bound.toPrecision(3)} ms from ${this.#roofline?.bytes ?? '?'} bytes moved and ${this.#roofline?.flops ?? '?'} FLOPs at this device's peak rates`;
    if (medianMs < IMPOSSIBLE_SHARE_OF_BOUND * bound) {
      return {
        verdict: 'rejected',
        reasons: [
          {
            check: 'faster-than-light',
            message: `the measured time is physically impossible: ${claim}; the timing was not honest (skipped work, cached results or a patched timer)`,
          },
        ],
      };
    }
    if (medianMs < bound) this.#notes.push(`faster than the speed-of-light bound (${claim}): check the bound's byte and FLOP counts`);
    return null;
  }

  /** Adds a sentence that changes no verdict but that a person should read (e.g. partial isolation). */
  note(sentence: string): void {
    if (!this.#notes.includes(sentence)) this.#notes.push(sentence);
  }

  /** The report for the result (null when no guard message arrived and there is nothing to note). */
  report(): GuardReport | null {
    if (!this.#guard && this.#checks.length === 0 && !this.#audit && !this.#roofline && this.#notes.length === 0) return null;
    const notes = [...this.#notes];
    if (this.#audit && this.#audit.exact_trivial.length > 0) {
      notes.push(`this problem is trivial under its tolerance: ${this.#audit.exact_trivial.join(', ')} is exactly right; flag the problem, not the kernel`);
    }
    return {
      policy: this.#guard?.policy ?? null,
      findings: this.#guard?.findings ?? [],
      checks: this.#checks,
      audit: this.#audit ? auditOf(this.#audit) : null,
      speed_of_light: this.#roofline
        ? {
            bytes: this.#roofline.bytes,
            flops: this.#roofline.flops,
            lower_bound_ms: this.#roofline.lower_bound_ms ?? null,
            share_of_bound: this.#boundShare,
          }
        : null,
      generalisation: this.#generalisation,
      notes,
    };
  }
}

/** The report's `audit`: the `audit` message without its protocol fields. */
function auditOf(message: MessageOfType<'audit'>): NonNullable<GuardReport['audit']> {
  const { v: _version, type: _type, ...audit } = message;
  return audit;
}
