import type { TimingStats, TimingSummary } from '../../core/verdict.js';
import { anchorBaselines } from './baseline-anchor.js';
import type { BaselineEntry, MessageOfType } from '../process/protocol.js';
import { computeSpeedups } from './speedup.js';
import { summarizeTimes } from './statistics.js';
import type { BudgetReport } from './timing-budget.js';
import { baselineFigure, boundedFigures, loadFactor, type TimedBatch } from './trusted-bound.js';

/** Host-inclusive time this many times the device time (or more) makes a call launch-bound. */
export const LAUNCH_BOUND_RATIO = 1.5;
/** A load factor (trusted-bound.ts) above this marks a machine too busy for the figures to hold. */
export const BUSY_LOAD_FACTOR = 1.5;
/** Calls whose launch outran the hold, as a share of a series' calls, above which the output says so. */
export const EXPOSED_SHARE = 0.1;
/** `--cross-check`: the two methods' medians may differ by this share before it is a finding. */
export const CROSS_CHECK_BOUND = 0.1;

export interface TimingSummaryInput {
  /**
   * What the per-call times measure (the backend's `clock.ts`): `device` (CUDA events on a GPU) or `host` (the cpu
   * backend's monotonic clock, where host-inclusive and per-call time are one figure and nothing is
   * launch-bound: a baseline's batches slower than its single calls there are the machine's load).
   */
  clock: 'device' | 'host';
  candidate: MessageOfType<'timing'>;
  /** The parent's trusted batches of the candidate (docs/timing.md); empty when none ran. */
  batches?: readonly TimedBatch[];
  /** Null when the baseline was not measured. */
  eager: BaselineEntry | null;
  compile: BaselineEntry | null;
  /** Whether the baselines came from the cache rather than this run. */
  baselineCached: boolean;
  /** Eager re-timed beside the candidate (`anchor`), when it was. */
  anchor?: BaselineEntry | null;
  budget?: BudgetReport;
}

function timesOf(entry: BaselineEntry | null | undefined): Extract<BaselineEntry, { times_ms: number[] }> | null {
  return entry && 'times_ms' in entry ? entry : null;
}

function wallOf(times: readonly number[] | undefined): TimingStats | undefined {
  return times && times.length > 0 ? summarizeTimes(times) : undefined;
}

type HoldFigure = NonNullable<NonNullable<TimingSummary['hold']>['candidate']>;

function holdOf(entry: { times_ms: number[]; hold_ms?: number | undefined; exposed_calls?: number | undefined } | null): HoldFigure | null {
  if (!entry || entry.hold_ms === undefined || entry.exposed_calls === undefined) return null;
  return { hold_ms: entry.hold_ms, exposed_calls: entry.exposed_calls, calls: entry.times_ms.length };
}

/** The timed calls' median against a second method's per-call figures: its median, the ratio, and whether they agree. */
function compared(candidate: TimingStats, timesMs: readonly number[]): { median: number; ratio: number | null; agrees: boolean } {
  const median = summarizeTimes(timesMs).median;
  const ratio = median > 0 ? candidate.median / median : null;
  return { median, ratio, agrees: ratio !== null && Math.abs(ratio - 1) <= CROSS_CHECK_BOUND };
}

function crossCheck(candidate: TimingStats, message: MessageOfType<'timing'>): TimingSummary['cross_check'] {
  const check = message.cross_check;
  if (!check) return undefined;
  const { median: other, ratio, agrees } = compared(candidate, check.times_ms);
  return {
    method: check.method,
    median_ms: other,
    ratio,
    bound: CROSS_CHECK_BOUND,
    agrees,
    ...(agrees
      ? {}
      : {
          finding: `the timed calls' median and ${check.method}'s differ by more than ${CROSS_CHECK_BOUND * 100}% (ratio ${ratio === null ? 'undefined' : ratio.toFixed(3)})`,
        }),
    ...(check.kernels ? { kernels: kernelCheck(candidate, check.kernels) } : {}),
  };
}

type KernelCheck = NonNullable<NonNullable<TimingSummary['cross_check']>['kernels']>;

/**
 * The timed calls' median against the sum of the kernels' own durations: the median is that or
 * more (launch gaps between a call's kernels are in it), so the finding says which way it is off.
 */
function kernelCheck(candidate: TimingStats, kernels: NonNullable<NonNullable<MessageOfType<'timing'>['cross_check']>['kernels']>): KernelCheck {
  if (!kernels.times_ms) return { method: kernels.method, unavailable: kernels.unavailable ?? 'no figures' };
  const { median: sum, ratio, agrees } = compared(candidate, kernels.times_ms);
  let finding: string | undefined;
  if (ratio === null) finding = 'the kernels ran for no measurable time';
  else if (ratio > 1 + CROSS_CHECK_BOUND)
    finding = `the timed calls' median is ${ratio.toFixed(3)}x the sum of the call's kernel durations: gaps between its kernels (launches from the host) are in the device time`;
  else if (ratio < 1 - CROSS_CHECK_BOUND)
    finding = `the timed calls' median is ${ratio.toFixed(3)}x the sum of the call's kernel durations: less device time than its own kernels ran for (kernels overlapping on several streams, or a timing that does not hold)`;
  return { method: kernels.method, median_ms: sum, ratio, agrees, ...(finding ? { finding } : {}) };
}

type TimedSeries = { times_ms: number[]; batch_ms?: number[] | undefined };

/**
 * A baseline's figure. On the host clock a baseline reports its calls as the trusted reference
 * process measured them: nothing there is launch-bound, and batches slower than single calls are
 * the host's load at the moment they ran (a cached baseline must give the same figure under any
 * later load).
 */
function baselineFigureOn(clock: TimingSummaryInput['clock'], entry: TimedSeries, load: number) {
  return clock === 'host'
    ? { stats: summarizeTimes(entry.times_ms), launchBound: false }
    : baselineFigure(summarizeTimes(entry.times_ms), entry.batch_ms, load);
}

/** Whether a series is launch-bound: its figure says so, or its single calls' wall time is {@link LAUNCH_BOUND_RATIO} times its median or more. */
function isLaunchBound(figureSays: boolean, wall: TimingStats | undefined, stats: TimingStats | null): boolean {
  return figureSays || (wall !== undefined && stats !== null && wall.median >= LAUNCH_BOUND_RATIO * stats.median);
}

/** The anchor, marked too busy (with the reason) when eager ran back to back more than {@link BUSY_LOAD_FACTOR} times slower. */
function markedBusy(anchor: NonNullable<TimingSummary['baseline_anchor']>, load: number): NonNullable<TimingSummary['baseline_anchor']> {
  if (load > BUSY_LOAD_FACTOR) {
    anchor.too_busy = true;
    anchor.reasons.push(`eager ran ${load.toFixed(2)}x slower back to back than one call at a time: the host is oversubscribed`);
  }
  return anchor;
}

/**
 * Statistics of the candidate's and the baselines' raw call times (computed here, not in the
 * process the candidate ran in: docs/hacks.md #5), bounded below by the parent's trusted batches
 * (docs/timing.md), re-anchored on eager re-timed beside the candidate, and the speedups.
 */
export function summarizeTiming(input: TimingSummaryInput): TimingSummary {
  const inProcess = summarizeTimes(input.candidate.times_ms);
  const eagerEntry = timesOf(input.eager);
  const compileEntry = timesOf(input.compile);
  const anchorEntry = timesOf(input.anchor);
  // Single calls' host-inclusive times where the re-timing has them (loadFactor says why).
  const load = loadFactor(anchorEntry?.wall_ms ?? anchorEntry?.times_ms, anchorEntry?.batch_ms);
  const bounded = boundedFigures(inProcess, wallOf(input.candidate.wall_ms), input.batches ?? [], load);
  const figureOf = (entry: TimedSeries) => baselineFigureOn(input.clock, entry, load);
  const eagerFigure = eagerEntry ? figureOf(eagerEntry) : null;
  const compileFigure = compileEntry ? figureOf(compileEntry) : null;
  const anchor =
    anchorEntry && eagerFigure
      ? anchorBaselines({
          earlier: eagerFigure.stats,
          anchor: figureOf(anchorEntry).stats,
          cached: input.baselineCached,
          candidate: bounded.candidate,
          clock: input.clock,
        })
      : null;
  const eager = anchor?.used === 'anchor' ? anchor.eager_ms : (eagerFigure?.stats ?? null);
  const compile = compileFigure?.stats ?? null;
  const speedups = computeSpeedups(bounded.candidate.median, eager?.median ?? null, compile?.median ?? null);
  const summary: TimingSummary = {
    clock: input.clock,
    candidate_ms: bounded.candidate,
    eager_ms: eager,
    compile_ms: compile,
    speedup_vs_eager: speedups.vsEager,
    speedup_vs_compile: speedups.vsCompile,
    speedup_vs_best: speedups.vsBest,
    baseline_cached: input.baselineCached,
  };
  if (bounded.wall) summary.candidate_wall_ms = bounded.wall;
  const eagerWall = wallOf(eagerEntry?.wall_ms);
  const compileWall = wallOf(compileEntry?.wall_ms);
  if (eagerWall) summary.eager_wall_ms = eagerWall;
  if (compileWall) summary.compile_wall_ms = compileWall;
  if (bounded.trusted) {
    summary.trusted = bounded.trusted;
    summary.in_process_ms = inProcess;
  }
  const launchBound = {
    candidate: isLaunchBound(false, bounded.wall, bounded.candidate),
    eager: isLaunchBound(eagerFigure?.launchBound === true, eagerWall, eager),
    compile: isLaunchBound(compileFigure?.launchBound === true, compileWall, compile),
  };
  if (input.clock === 'device' && (launchBound.candidate || launchBound.eager || launchBound.compile)) summary.launch_bound = launchBound;
  const hold = { candidate: holdOf(input.candidate), eager: holdOf(eagerEntry), compile: holdOf(compileEntry) };
  if (hold.candidate || hold.eager || hold.compile) summary.hold = hold;
  if (input.budget) summary.budget = input.budget;
  const check = crossCheck(inProcess, input.candidate);
  if (check) summary.cross_check = check;
  if (anchor) summary.baseline_anchor = markedBusy(anchor, load);
  if (input.compile && 'error' in input.compile) summary.compile_unavailable = input.compile.error;
  if (input.eager && 'error' in input.eager) summary.eager_unavailable = input.eager.error;
  return summary;
}
