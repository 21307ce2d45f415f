import type { TimingStats } from '../../core/verdict.js';
import { median, summarizeTimes } from './statistics.js';

/** Share of the trusted per-call figure a reported time may fall below it before it is not believed. */
export const TRUSTED_RELATIVE_SLACK = 0.1;
/** The channel round trip counted against a batch: this many times the slowest ping before it. */
export const OVERHEAD_FACTOR = 1.5;
/** A batch whose counted round trip exceeds this share of its elapsed time makes the bound loose. */
export const LOOSE_OVERHEAD_SHARE = 0.5;

/** One trusted batch as the parent timed it: `go` written to `batch-done` read, on its own clock. */
export interface TimedBatch {
  calls: number;
  elapsedMs: number;
  /** Round trips of `ping` to the reference worker just before the batch, ms. */
  overheadMs: readonly number[];
}

/** Where a reported figure came from: the candidate's own clock, or the parent's batches. */
export type FigureSource = 'in-process' | 'trusted-batch';

/** The trusted bound of the candidate's times and what was reported (the verdict's `timing.trusted`). */
export interface TrustedBound {
  batches: number;
  calls: number;
  /** Median over the batches of (elapsed − best round trip) / calls, ms. */
  trusted_ms: number;
  /** Lowest per-call time believed: min over the batches (those not loose, where any) of (elapsed − 1.5 × slowest round trip) / calls, less 10%, ms. */
  bound_ms: number;
  /** Median round trip of the channel, ms. */
  overhead_ms: number;
  source: FigureSource;
  /** The channel's round trip took over half of every batch: the bound is weak. */
  loose: boolean;
  /**
   * How much slower the host ran calls back to back than one at a time, measured beside the
   * candidate on eager in the reference process (1 on an idle host); the bound was divided by it.
   */
  load_factor: number;
}

/**
 * The host's load factor from eager re-timed beside the candidate: its batches' per-call median
 * over its single calls' median, never below 1. On an oversubscribed host a batch loses time
 * slices that the median of single calls leaves out; the trusted process shows by how much.
 *
 * `singleMs` should be the single calls' host-inclusive times (`wall_ms`) on a device clock: a
 * batch is paced by the host as much as by the device, and so is a single call's host-inclusive
 * time, so on an idle host the two agree whether the call is launch-bound or not. Against the
 * events' device time a launch-bound eager read as load: on the H100 (2026-12-06) KernelBench
 * level-3 ResNet18 and VisionTransformer showed factors of 4.8 and 3.2 on an idle host, the
 * candidate's bound was divided by them while eager kept its batch figure, and a candidate running
 * eager's own PyTorch operators read 3.0x faster than eager.
 */
export function loadFactor(singleMs: readonly number[] | undefined, batchMs: readonly number[] | undefined): number {
  if (!singleMs?.length || !batchMs?.length) return 1;
  const single = median(singleMs);
  return single > 0 ? Math.max(1, median(batchMs) / single) : 1;
}

/** Whether the counted round trip took over half of the batch (its bound says little). */
export function isLoose(batch: TimedBatch): boolean {
  return OVERHEAD_FACTOR * Math.max(0, ...batch.overheadMs) > LOOSE_OVERHEAD_SHARE * batch.elapsedMs;
}

/** Per-call figures of each batch: best estimate and lower bound, in ms. */
export function batchFigures(batch: TimedBatch): { perCallMs: number; boundMs: number } {
  const best = batch.overheadMs.length > 0 ? Math.min(...batch.overheadMs) : 0;
  const worst = batch.overheadMs.length > 0 ? Math.max(...batch.overheadMs) : 0;
  return {
    perCallMs: Math.max(0, batch.elapsedMs - best) / batch.calls,
    boundMs: Math.max(0, batch.elapsedMs - OVERHEAD_FACTOR * worst) / batch.calls,
  };
}

/**
 * The candidate's reported figure (docs/timing.md, P1): its in-process statistics when their
 * median is not below the trusted bound (divided by the host's `load` factor), otherwise the statistics of the trusted batches'
 * per-call figures (a launch-bound honest kernel, or a forged clock: either way the figure is the
 * parent's own). `wall` is bounded the same way.
 *
 * @example
 * boundedFigures(stats, wall, [{ calls: 100, elapsedMs: 21, overheadMs: [0.3, 0.4, 0.3] }])
 */
export function boundedFigures(
  inProcess: TimingStats,
  wall: TimingStats | undefined,
  batches: readonly TimedBatch[],
  load = 1,
): { candidate: TimingStats; wall: TimingStats | undefined; trusted: TrustedBound | null } {
  if (batches.length === 0) return { candidate: inProcess, wall, trusted: null };
  const figures = batches.map(batchFigures);
  const trustedStats = summarizeTimes(figures.map((figure) => figure.perCallMs));
  // The bound comes from the batches the channel's round trip does not dominate, where there are any.
  const tight = batches.map((batch, index) => (isLoose(batch) ? null : figures[index]!)).filter((figure) => figure !== null);
  const boundMs = (Math.min(...(tight.length > 0 ? tight : figures).map((figure) => figure.boundMs)) * (1 - TRUSTED_RELATIVE_SLACK)) / Math.max(1, load);
  const clamped = inProcess.median < boundMs;
  const pings = batches.flatMap((batch) => batch.overheadMs);
  const trusted: TrustedBound = {
    batches: batches.length,
    calls: batches.reduce((sum, batch) => sum + batch.calls, 0),
    trusted_ms: trustedStats.median,
    bound_ms: boundMs,
    overhead_ms: pings.length > 0 ? median(pings) : 0,
    source: clamped ? 'trusted-batch' : 'in-process',
    loose: tight.length === 0,
    load_factor: Math.max(1, load),
  };
  const boundedWall = wall && wall.median < boundMs ? trustedStats : wall;
  return { candidate: clamped ? trustedStats : inProcess, wall: boundedWall, trusted };
}

/**
 * A baseline's reported figure on a device clock: its event statistics, or its own batches'
 * statistics when the events' median is below them by more than the slack (launch-bound: the
 * host, not the device, sets the pace). The reference is trusted; this keeps candidate and
 * baselines under one rule, with the same `load` factor the candidate's bound is divided by
 * (batches slowed by the host's load are not a launch-bound call). (On the cpu backend's host
 * clock a baseline reports its calls as measured: see summarizeTiming.)
 */
export function baselineFigure(events: TimingStats, batchMs: readonly number[] | undefined, load = 1): { stats: TimingStats; launchBound: boolean } {
  if (!batchMs || batchMs.length === 0) return { stats: events, launchBound: false };
  const batches = summarizeTimes(batchMs);
  const launchBound = events.median < (batches.min * (1 - TRUSTED_RELATIVE_SLACK)) / Math.max(1, load);
  return { stats: launchBound ? batches : events, launchBound };
}
