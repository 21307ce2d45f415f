import { backendModule } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';

/** Timed calls kept however slow the candidate (docs/spec.md section 5), unless fewer were asked for. */
export const MIN_BUDGET_CALLS = 10;
/** Share of the budget the warm-up may take (it always makes one call). */
export const WARMUP_SHARE = 0.1;
/** Share of the budget the per-call loop may take before it stops; the rest is for the batches. */
export const CALLS_SHARE = 0.8;
/** Default time budget of the timing stage, ms: keeps one evaluation's timing to tens of seconds. */
export const DEFAULT_TIMING_BUDGET_MS = 30_000;
/** The warm-up by time a backend gets when none is asked for (its `clock.ts`: none on cpu, whose clocks do not ramp). */
export function defaultWarmupMs(backend: Backend): number {
  return backendModule(backend).clock.defaultWarmupMs;
}
/** Most warm-up calls a warm-up by time makes (the worker's WARMUP_CALL_LIMIT, timing.py). */
export const WARMUP_CALL_LIMIT = 1000;

/** The most warm-up calls a request allows (the worker's `warmup_call_limit`). */
export function warmupCallLimit(warmupTrials: number, warmupMs: number): number {
  return warmupTrials < 1 || warmupMs <= 0 ? warmupTrials : Math.max(warmupTrials, WARMUP_CALL_LIMIT);
}

/** The verdict's `timing.budget`: how many calls were made and why no more. */
export interface BudgetReport {
  budget_ms: number;
  requested_calls: number;
  timed_calls: number;
  requested_warmup: number;
  warmup_calls: number;
  /** The warm-up by time asked for, ms (0: none). */
  requested_warmup_ms: number;
  /** Host time the warm-up took, from the first warm-up call's return to the last one's, ms. */
  warmup_ms: number;
  /** Why fewer calls than asked for were made; null when all were. */
  reason: string | null;
}

/**
 * The parent's time budget for the candidate's timing stage (docs/timing.md), on the parent's own
 * clock from the first call's return: warm-up calls go on past the count asked for until the
 * warm-up by time has passed ({@link WARMUP_CALL_LIMIT} calls at most) and end once a tenth of the
 * budget is spent (after one), timed calls once 80% is (never before {@link MIN_BUDGET_CALLS}); the
 * trusted batches share what is left.
 */
export class TimingBudget {
  readonly budgetMs: number;
  readonly #perfTrials: number;
  readonly #warmupTrials: number;
  readonly #warmupMs: number;
  readonly #now: () => number;
  #startedMs: number | null = null;
  #warmupCalls = 0;
  #warmupEndMs = 0;
  #timedCalls = 0;
  #stoppedEarly = false;

  constructor(options: { budgetMs: number; perfTrials: number; warmupTrials: number; warmupMs?: number; now: () => number }) {
    this.budgetMs = options.budgetMs;
    this.#perfTrials = options.perfTrials;
    this.#warmupTrials = options.warmupTrials;
    this.#warmupMs = options.warmupMs ?? 0;
    this.#now = options.now;
  }

  /** Starts the clock: at the first call's return (building the input contents is not counted). */
  start(): void {
    this.#startedMs ??= this.#now();
  }

  /** ms since {@link start} (0 before it). */
  elapsedMs(): number {
    return this.#startedMs === null ? 0 : this.#now() - this.#startedMs;
  }

  /** ms of the budget left (never negative). */
  remainingMs(): number {
    return Math.max(0, this.budgetMs - this.elapsedMs());
  }

  /** After warm-up call `index`: whether another one follows. */
  moreWarmup(index: number): boolean {
    this.#warmupCalls = index + 1;
    this.#warmupEndMs = this.elapsedMs();
    if (index + 1 >= warmupCallLimit(this.#warmupTrials, this.#warmupMs)) return false;
    const overShare = this.#warmupEndMs >= WARMUP_SHARE * this.budgetMs;
    if (index + 1 >= this.#warmupTrials) return !overShare && this.#warmupEndMs < this.#warmupMs;
    if (overShare) this.#stoppedEarly = true;
    return !overShare;
  }

  /** After timed call `index`: whether another one follows. */
  moreTimed(index: number): boolean {
    this.#timedCalls = index + 1;
    if (index + 1 >= this.#perfTrials) return false;
    if (index + 1 >= MIN_BUDGET_CALLS && this.elapsedMs() >= CALLS_SHARE * this.budgetMs) {
      this.#stoppedEarly = true;
      return false;
    }
    return true;
  }

  report(): BudgetReport {
    const fewer = this.#timedCalls < this.#perfTrials || this.#warmupCalls < this.#warmupTrials;
    return {
      budget_ms: this.budgetMs,
      requested_calls: this.#perfTrials,
      timed_calls: this.#timedCalls,
      requested_warmup: this.#warmupTrials,
      warmup_calls: this.#warmupCalls,
      requested_warmup_ms: this.#warmupMs,
      warmup_ms: this.#warmupEndMs,
      reason:
        this.#stoppedEarly && fewer
          ? `the calls took long: ${this.#timedCalls} timed calls and ${this.#warmupCalls} warm-up calls fit the timing budget of ${(this.budgetMs / 1000).toFixed(0)} s`
          : null,
    };
  }
}
