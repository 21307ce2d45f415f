import type { SizeEstimate } from './size-estimate.js';

/** The time a message offers a size for when the user named none: about a minute. */
export const OFFERED_EVALUATION_MS = 60_000;

type Overrides = Readonly<Record<string, number | boolean>>;

/** `about 53 s`, `about 21 min`, `about 2.7 h`. */
export function formatEvaluationTime(seconds: number): string {
  if (seconds < 100) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 6000) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** `60s`, `2m`, `1.5h`: a duration as `--eval-budget` takes it. */
export function formatBudgetFlag(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  if (seconds >= 3600 && seconds % 360 === 0) return `${seconds / 3600}h`;
  if (seconds >= 600 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)}s`;
}

/** `--set batch_size=16 --set dim=8`. */
export function setFlags(overrides: Overrides): string {
  return Object.entries(overrides)
    .map(([name, value]) => `--set ${name}=${String(value)}`)
    .join(' ');
}

/**
 * The estimated seconds of one evaluation at `overrides` (the sizes asked for when they leave the
 * batch constant alone), from the estimate's `time`; null where it has none or that size was not
 * among the halvings it timed.
 */
export function evaluationSecondsAt(estimate: SizeEstimate, overrides: Overrides | null = null): number | null {
  const time = estimate.time;
  if (!time || time.evaluation_s === null) return null;
  const value = time.constant && overrides ? overrides[time.constant] : undefined;
  if (typeof value !== 'number') return time.evaluation_s;
  return time.sizes?.find((size) => size.value === value)?.evaluation_s ?? null;
}

/**
 * The size the estimate found for its time budget, in words: `an evaluation takes about 53 s at
 * --set batch_size=16`; null without one.
 */
export function timeFitWords(estimate: SizeEstimate): string | null {
  const fit = estimate.time?.fit;
  return fit ? `an evaluation takes ${formatEvaluationTime(fit.evaluation_s)} at ${setFlags(fit.overrides)}` : null;
}
