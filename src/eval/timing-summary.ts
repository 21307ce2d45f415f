import type { TimingStats, TimingSummary } from '../core/verdict.js';
import type { BaselineEntry, TimingMessage } from './protocol.js';
import { computeSpeedups } from './speedup.js';
import { summarizeTimes } from './statistics.js';

export interface TimingSummaryInput {
  candidate: TimingMessage;
  /** Null when the baseline was not measured. */
  eager: BaselineEntry | null;
  compile: BaselineEntry | null;
  /** Whether the baselines came from the cache rather than this run. */
  baselineCached: boolean;
}

/**
 * Statistics of the candidate's and the baselines' raw call times (computed here, not in the
 * process the candidate ran in: HACKS.md #5) and the speedups of the medians.
 */
export function summarizeTiming(input: TimingSummaryInput): TimingSummary {
  const candidate = summarizeTimes(input.candidate.times_ms);
  const eager = statsOf(input.eager);
  const compile = statsOf(input.compile);
  const speedups = computeSpeedups(candidate.median, eager?.median ?? null, compile?.median ?? null);
  const summary: TimingSummary = {
    candidate_ms: candidate,
    eager_ms: eager,
    compile_ms: compile,
    speedup_vs_eager: speedups.vsEager,
    speedup_vs_compile: speedups.vsCompile,
    speedup_vs_best: speedups.vsBest,
    baseline_cached: input.baselineCached,
  };
  const wall = input.candidate.wall_ms;
  if (wall && wall.length > 0) summary.candidate_wall_ms = summarizeTimes(wall);
  if (input.compile && 'error' in input.compile) summary.compile_unavailable = input.compile.error;
  if (input.eager && 'error' in input.eager) summary.eager_unavailable = input.eager.error;
  return summary;
}

function statsOf(entry: BaselineEntry | null): TimingStats | null {
  return entry && 'times_ms' in entry ? summarizeTimes(entry.times_ms) : null;
}
