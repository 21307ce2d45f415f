import { POLICY_DECIDED_CHECKS } from '../../core/guard-policy.js';
import type { CorrectnessSummary, Reason, ToleranceProfile } from '../../core/verdict.js';
import type { Outcome } from './outcome.js';
import type { JudgedTrial, MessageOfType } from '../process/protocol.js';
import type { RunTolerance, Tolerance } from '../../core/tolerance.js';

/**
 * The error profile of a judgement (docs/spec.md section 4): trials passed, largest errors against the
 * run-precision and float64 references, elements outside tolerance, the tolerance used and where it
 * came from, and every trial's details.
 */
export function summarizeCorrectness(judgement: MessageOfType<'judgement'>, tolerance: RunTolerance, profile: ToleranceProfile): CorrectnessSummary {
  const trials = judgement.trials;
  const fp64Abs = largest(trials.map((trial) => trial.fp64_max_abs_error));
  const fp64Rel = largest(trials.map((trial) => trial.fp64_max_rel_error));
  return {
    trials: trials.length,
    passed: trials.filter((trial) => trial.passed).length,
    max_abs_error: largest(trials.map((trial) => trial.max_abs_error)),
    max_rel_error: largest(trials.map((trial) => trial.max_rel_error)),
    mismatch_count: trials.reduce((sum, trial) => sum + (trial.mismatch_count ?? 0), 0),
    atol: tolerance.atol,
    rtol: tolerance.rtol,
    tolerance: profile,
    tolerance_source: tolerance.source,
    tolerance_dtype: tolerance.dtype,
    fp64: fp64Abs === null && fp64Rel === null ? null : { max_abs_error: fp64Abs, max_rel_error: fp64Rel },
    high_precision_dtype: highPrecisionDtype(trials),
    trial_details: trials.map((trial) => ({ ...trial })),
  };
}

/** Trial checks that show a dishonest result rather than a wrong one (docs/worker-protocol.md, "Verdicts from the guard"). */
const DISHONEST_CHECKS: ReadonlySet<string> = new Set(['input-mutation', 'degenerate-output', 'handover', 'handover-window']);

/**
 * The verdict of the correctness trials' judgement: `correct` only when every trial passed;
 * `rejected` when any trial changed its inputs (docs/hacks.md #2); otherwise `incorrect`, with one
 * reason per kind of failure, naming the first trial that failed that way.
 */
export function outcomeOfJudgement(judgement: MessageOfType<'judgement'>, tolerance: Tolerance): Outcome {
  const failing = judgement.trials.filter((trial) => !trial.passed);
  if (judgement.passed && failing.length === 0) return { verdict: 'correct', reasons: [] };
  const total = judgement.trials.length;
  const byCheck = new Map<string, JudgedTrial[]>();
  for (const trial of failing) {
    const check = trial.check ?? 'mismatch';
    byCheck.set(check, [...(byCheck.get(check) ?? []), trial]);
  }
  const reasons: Reason[] = [];
  for (const [check, trials] of byCheck) {
    const first = trials[0]!;
    const index = judgement.trials.indexOf(first) + 1;
    const others = trials.length - 1;
    const where =
      trials.length === total && total > 1
        ? `in all ${total} trials; first seed ${first.seed}`
        : `trial ${index} of ${total}, seed ${first.seed}${others > 0 ? `; ${others} more trial${others === 1 ? '' : 's'} failed the same way` : ''}`;
    reasons.push({ check, message: `${trialMessage(first, tolerance)} (${where})` });
  }
  const dishonest = reasons.findIndex((reason) => DISHONEST_CHECKS.has(reason.check));
  if (dishonest >= 0) {
    const [reason] = reasons.splice(dishonest, 1);
    return { verdict: 'rejected', reasons: [reason!, ...reasons] };
  }
  return { verdict: 'incorrect', reasons };
}

/**
 * Which comes first when the policy rejected what ran (`torch-fallback`, `own-kernel`,
 * `silent-fallback`: POLICY_DECIDED_CHECKS) after the traced call's output was judged: a wrong
 * answer (`judged` failed) is said first — `incorrect`, or the judgement's own `rejected` for a
 * dishonest output — with the policy's reasons after the judgement's. Any other outcome, or a
 * right answer, is `ended` itself.
 *
 * @example answerBeforePolicy(torchFallbackRejection, wrongShapeJudgement, tolerance) // verdict 'incorrect', reasons [shape, torch-fallback]
 */
export function answerBeforePolicy(ended: Outcome, judged: MessageOfType<'judgement'> | null, tolerance: Tolerance): Outcome {
  if (ended.verdict !== 'rejected' || !POLICY_DECIDED_CHECKS.has(ended.reasons[0]?.check ?? '')) return ended;
  if (judged === null || judged.passed) return ended;
  const answer = outcomeOfJudgement(judged, tolerance);
  return { verdict: answer.verdict, reasons: [...answer.reasons, ...ended.reasons], ...(ended.diagnostics ? { diagnostics: ended.diagnostics } : {}) };
}

/**
 * The verdict on the sampled timed calls' outputs. Correctness already passed, so any failure here
 * means the candidate answered differently while timed (docs/hacks.md #8, #9): `rejected`.
 */
export function outcomeOfTimedJudgement(judgement: MessageOfType<'judgement'>, calls: readonly number[], tolerance: Tolerance): Outcome | null {
  const failing = judgement.trials.findIndex((trial) => !trial.passed);
  if (judgement.passed && failing === -1) return null;
  const trial = judgement.trials[failing === -1 ? 0 : failing]!;
  const call = calls[failing === -1 ? 0 : failing];
  if (trial.check && DISHONEST_CHECKS.has(trial.check)) {
    return { verdict: 'rejected', reasons: [{ check: trial.check, message: `timed call ${call} (seed ${trial.seed}): ${trialMessage(trial, tolerance)}` }] };
  }
  return {
    verdict: 'rejected',
    reasons: [
      {
        check: 'timed-output',
        message: `timed call ${call} (seed ${trial.seed}) returned a different answer from the reference although the correctness trials passed: ${trialMessage(trial, tolerance)}; an honest kernel gives the same answer on every call`,
      },
    ],
  };
}

/** The worker's sentence for a trial, or one made from its figures. */
function trialMessage(trial: JudgedTrial, tolerance: Tolerance): string {
  if (trial.message) return trial.message;
  if (trial.mismatch_count != null && trial.numel != null) {
    const error = trial.max_abs_error == null ? '' : `max abs error ${trial.max_abs_error.toPrecision(3)}, `;
    return `the output differs from the reference at ${trial.mismatch_count} of ${trial.numel} elements (${error}tolerance atol=${tolerance.atol}, rtol=${tolerance.rtol})`;
  }
  return `the output failed the \`${trial.check ?? 'mismatch'}\` check`;
}

/** The twin's dtype over the trials: `float32` where any trial's fell back to it, else `float64` where any had one, else null. */
function highPrecisionDtype(trials: readonly JudgedTrial[]): 'float64' | 'float32' | null {
  const dtypes = new Set(trials.map((trial) => trial.high_precision_dtype ?? null));
  if (dtypes.has('float32')) return 'float32';
  return dtypes.has('float64') ? 'float64' : null;
}

function largest(values: ReadonlyArray<number | null | undefined>): number | null {
  let result: number | null = null;
  for (const value of values) if (value != null && (result === null || value > result)) result = value;
  return result;
}
