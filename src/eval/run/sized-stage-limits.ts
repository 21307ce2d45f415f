import type { StageLimitReport } from '../../core/verdict.js';
import type { Stage, MessageOfType } from '../process/protocol.js';
import { MIN_BUDGET_CALLS } from '../timing/timing-budget.js';
import type { EvaluationSettings } from './evaluation-settings.js';

/**
 * How many times the reference's own time for the same work a candidate's stage may take before it
 * is a `timeout`. The reference's trials are measured in the same evaluation on the same machine, so
 * the limit says "five times what PyTorch needed here", whatever the machine and the sizes.
 */
export const STAGE_LIMIT_MULTIPLE = 5;

/**
 * The least each sized stage gets, ms: a problem whose calls take milliseconds still pays for a
 * first call's set-up (a Triton kernel compiles at its first call, OpenMP starts its threads) and
 * for the timing stage's input contents (up to 1 GiB drawn).
 */
export const STAGE_LIMIT_FLOORS_MS = { load: 60_000, correctness: 60_000, timing: 120_000 } as const;

/**
 * Trials of the reference that the timing stage is given beside its budget: the timed calls it
 * makes however slow the candidate ({@link MIN_BUDGET_CALLS}), a warm-up call, a trusted batch's
 * call, and the three timing models with their live input sets.
 */
const TIMING_TRIALS = MIN_BUDGET_CALLS + 1 + 1 + 3;
/** A generalisation trial (`--shapes`: twice and half the batch) counted as this many trials. */
const GENERALISATION_TRIALS = 2 + 0.5;

/** The stages whose limits follow the reference's measured time. */
export const SIZED_STAGES = ['load', 'correctness', 'timing', 'judge'] as const;
type SizedStage = (typeof SIZED_STAGES)[number];

/**
 * The reference's time for one trial in the run's precision, ms (drawing the inputs, building the
 * model and the forward, as the candidate's process does them): the slowest of the trials it
 * reported in `reference-ready`, so a first call's set-up is in it. Null from a worker that does
 * not report it.
 */
export function referenceTrialMs(ready: MessageOfType<'reference-ready'>): number | null {
  const times = ready.trials.map((trial) => trial.trial_ms).filter((value): value is number => value !== undefined);
  return times.length === 0 ? null : Math.max(...times);
}

/** Reference trials each sized stage holds (its own work, in the reference's trials). */
function trialsOf(stage: SizedStage, settings: EvaluationSettings): number {
  switch (stage) {
    case 'load':
      return 1;
    case 'correctness':
      // A warm call, the trials, and the generalisation trials of `--shapes`.
      return 1 + settings.trials + (settings.shapes ? GENERALISATION_TRIALS : 0);
    case 'timing':
      return TIMING_TRIALS * (settings.crossCheck ? 2 : 1);
    case 'judge':
      // One output a request, its reference computed again (the float64 twin too, about three
      // trials' time) at up to twice the batch (a generalisation trial).
      return 2 * 3;
  }
}

/**
 * The stage limits of an evaluation once the reference has measured the problem's pace, ms, and
 * how each was chosen: `flag` (a `--timeout-<stage>` the user gave: it wins), `reference`
 * ({@link STAGE_LIMIT_MULTIPLE} times the reference's time for the stage's trials, at least the
 * stage's floor; the timing stage also gets its time budget), or `default` (a stage the
 * reference's time does not size: the build, the reference's own stages). The judge runs in the
 * reference's process, never the candidate's: its limit only grows from the default, since past it
 * there is no verdict, only a machine that could not evaluate.
 *
 * @example
 * sizedStageLimits(settings, 2600).limits.correctness; // { limit_ms: 78000, source: 'reference', trials: 6 }
 */
export function sizedStageLimits(
  settings: EvaluationSettings,
  trialMs: number | null,
): { stagesMs: Record<Stage, number>; limits: Partial<Record<Stage, StageLimitReport>> } {
  const stagesMs = { ...settings.stageLimitsMs };
  const limits: Partial<Record<Stage, StageLimitReport>> = {};
  for (const stage of Object.keys(stagesMs) as Stage[]) {
    const given = settings.flagLimits.has(stage);
    limits[stage] = { limit_ms: stagesMs[stage], source: given ? 'flag' : 'default' };
  }
  if (trialMs === null) return { stagesMs, limits };
  for (const stage of SIZED_STAGES) {
    if (settings.flagLimits.has(stage)) continue;
    const trials = trialsOf(stage, settings);
    // Whole seconds, rounded up: a limit a person reads and may pass back as --timeout-<stage>.
    const measuredMs =
      Math.ceil((STAGE_LIMIT_MULTIPLE * trialMs * trials + (stage === 'timing' && settings.timing ? settings.timingBudgetMs : 0)) / 1000) * 1000;
    const floorMs = stage === 'judge' ? settings.stageLimitsMs.judge : STAGE_LIMIT_FLOORS_MS[stage];
    stagesMs[stage] = Math.max(floorMs, measuredMs);
    limits[stage] = { limit_ms: stagesMs[stage], source: 'reference', trials };
  }
  return { stagesMs, limits };
}

/**
 * Why a stage's limit is what it is, for the sentence of a `timeout`: `5 × the reference's 2.6 s a
 * trial for the stage's 6 trials, at least 60 s`; `set by --timeout-correctness`; `the default`.
 */
export function limitBasis(stage: Stage, limit: StageLimitReport | undefined, trialMs: number | null, flag: string): string {
  if (!limit || limit.source === 'default') return `the default; ${flag} sets it`;
  if (limit.source === 'flag') return `set by ${flag}`;
  const trials = limit.trials ?? 1;
  const floorMs = stage in STAGE_LIMIT_FLOORS_MS ? STAGE_LIMIT_FLOORS_MS[stage as keyof typeof STAGE_LIMIT_FLOORS_MS] : null;
  const budget = stage === 'timing' ? ' plus the timing budget' : '';
  const floor = floorMs === null ? '' : `, at least ${formatSeconds(floorMs)}`;
  const per = trialMs === null ? '' : ` (${formatSeconds(trialMs)} a trial)`;
  return `${STAGE_LIMIT_MULTIPLE} × the reference's own time${per} for the stage's ${formatTrials(trials)}${budget}${floor}`;
}

function formatTrials(trials: number): string {
  return `${Number.isInteger(trials) ? trials : trials.toFixed(1)} trial${trials === 1 ? '' : 's'}`;
}

/** `78 s`, `2.6 s`, `0.15 s`. */
export function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  if (seconds >= 10) return `${Math.round(seconds)} s`;
  return `${seconds >= 1 ? seconds.toFixed(1) : seconds.toFixed(2)} s`;
}
