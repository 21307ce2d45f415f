import type { TimingStats } from '../../core/verdict.js';

/** Eager medians within this share of each other agree even where their intervals do not overlap. */
export const ANCHOR_AGREEMENT = 0.03;
/** A 95% interval wider than this share of its median marks a busy machine. */
export const WIDE_INTERVAL = 0.1;

/** The verdict's `timing.baseline_anchor`: eager re-timed beside the candidate (docs/timing.md). */
export interface BaselineAnchor {
  /** Eager as re-timed after the candidate's timed calls. */
  eager_ms: TimingStats;
  /** Whether it agrees with the eager figure measured before (cached or earlier in this evaluation). */
  agreed: boolean;
  /** anchor median / earlier median − 1. */
  drift: number;
  /** Which eager figure the speedups use. */
  used: 'cached' | 'measured' | 'anchor';
  /** The cached torch.compile figure could not be confirmed (eager drifted, compile was not re-timed). */
  compile_unconfirmed: boolean;
  /** The machine was too busy for the speedups to hold; `reasons` say why. */
  too_busy: boolean;
  reasons: string[];
}

function overlap(a: readonly [number, number], b: readonly [number, number]): boolean {
  return a[0] <= b[1] && b[0] <= a[1];
}

function relativeWidth(stats: TimingStats): number {
  return stats.median > 0 ? (stats.ci95[1] - stats.ci95[0]) / stats.median : 0;
}

/**
 * Decides how the speedups are anchored. On the host clock (cpu) a cached eager figure is used
 * only when a short re-timing now agrees with it (overlapping 95% intervals, or medians within
 * 3%); otherwise the re-timing is used, measured under the load the candidate met, and the cached
 * torch.compile figure is marked unconfirmed. On a device clock, where a call's device time does
 * not move with the host's load, two figures that disagree mean one of them was disturbed, and a
 * disturbance only adds time: the speedups use the faster one. (On the H100, 2026-12-06, three
 * KernelBench convolution problems re-timed 98-118% slower beside the candidate than their cached
 * figures, and taking the re-timing doubled the candidates' speedups.) The machine is called too
 * busy when eager drifted, or the candidate's or the re-timing's interval is wider than 10% of its
 * median.
 *
 * @example anchorBaselines({ earlier, anchor, cached: true, candidate, clock: 'device' })
 */
export function anchorBaselines(input: {
  earlier: TimingStats;
  anchor: TimingStats;
  cached: boolean;
  candidate: TimingStats;
  clock: 'device' | 'host';
}): BaselineAnchor {
  const { earlier, anchor, cached, candidate, clock } = input;
  const drift = earlier.median > 0 ? anchor.median / earlier.median - 1 : 0;
  const agreed = overlap(earlier.ci95, anchor.ci95) || Math.abs(drift) <= ANCHOR_AGREEMENT;
  const reasons: string[] = [];
  if (!agreed) {
    reasons.push(`eager moved by ${(drift * 100).toFixed(1)}% between its ${cached ? 'cached figure' : 'first timing'} and a re-timing beside the candidate`);
  }
  for (const [name, stats] of [
    ['the candidate', candidate],
    ['eager re-timed', anchor],
  ] as const) {
    if (relativeWidth(stats) > WIDE_INTERVAL) {
      reasons.push(`${name}'s 95% interval spans ${(relativeWidth(stats) * 100).toFixed(1)}% of its median`);
    }
  }
  const earlierUsed = cached ? 'cached' : 'measured';
  let used: BaselineAnchor['used'] = earlierUsed;
  if (!agreed && clock === 'device') used = anchor.median < earlier.median ? 'anchor' : earlierUsed;
  else if (!agreed && cached) used = 'anchor';
  return { eager_ms: anchor, agreed, drift, used, compile_unconfirmed: used === 'anchor', too_busy: reasons.length > 0, reasons };
}
