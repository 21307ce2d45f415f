/** Limits of a search. Every limit is optional; an absent one never stops the search. */
export interface BudgetLimits {
  /** Model replies asked for a kernel (a reply without code counts: it cost a turn). */
  maxCandidates?: number;
  /** Wall-clock time, in milliseconds, from the start of the search. */
  maxWallMs?: number;
  /** Prompt plus completion tokens. */
  maxTokens?: number;
  /** Model spending in US dollars, as the provider prices it. */
  maxCostUsd?: number;
  /** Time the evaluations held a device, in seconds. */
  maxDeviceSeconds?: number;
  /** Stop as soon as a correct candidate reaches this speedup (against the chosen baseline). */
  targetSpeedup?: number;
}

/** What a search has used so far. */
export interface BudgetUsage {
  candidates: number;
  tokens: number;
  costUsd: number;
  deviceMs: number;
  elapsedMs: number;
  bestSpeedup: number | null;
}

/** Why a budget refuses further work. */
export type BudgetStopReason = 'candidates' | 'wall-clock' | 'tokens' | 'cost' | 'device-seconds' | 'target-speedup';

export interface BudgetTrackerOptions {
  /** Clock in milliseconds (injected for tests). */
  now?: () => number;
  /** A wider budget (the whole run) that this one also draws from and obeys. */
  parent?: BudgetTracker;
  /** Usage carried over from before (a resumed run). `elapsedMs` shifts the wall clock's start. */
  spent?: Partial<BudgetUsage>;
}

/**
 * Counts what a search spends and says when it must stop. Candidates are reserved before the model
 * is asked, so parallel strategies never overshoot `maxCandidates`; tokens, cost and device time are
 * known only afterwards, so those limits stop the next reservation, not one already running.
 */
export class BudgetTracker {
  private readonly now: () => number;
  private readonly parent: BudgetTracker | undefined;
  private readonly startedAtMs: number;
  private candidates: number;
  private tokens: number;
  private costUsd: number;
  private deviceMs: number;
  private bestSpeedup: number | null;

  constructor(
    readonly limits: BudgetLimits,
    options: BudgetTrackerOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.parent = options.parent;
    const spent = options.spent ?? {};
    this.startedAtMs = this.now() - (spent.elapsedMs ?? 0);
    this.candidates = spent.candidates ?? 0;
    this.tokens = spent.tokens ?? 0;
    this.costUsd = spent.costUsd ?? 0;
    this.deviceMs = spent.deviceMs ?? 0;
    this.bestSpeedup = spent.bestSpeedup ?? null;
  }

  /** The first limit that is used up (here or in the parent), or null while work may go on. */
  stopReason(): BudgetStopReason | null {
    const { limits } = this;
    if (limits.targetSpeedup !== undefined && this.bestSpeedup !== null && this.bestSpeedup >= limits.targetSpeedup) {
      return 'target-speedup';
    }
    if (limits.maxCandidates !== undefined && this.candidates >= limits.maxCandidates) return 'candidates';
    if (limits.maxWallMs !== undefined && this.now() - this.startedAtMs >= limits.maxWallMs) return 'wall-clock';
    if (limits.maxTokens !== undefined && this.tokens >= limits.maxTokens) return 'tokens';
    if (limits.maxCostUsd !== undefined && this.costUsd >= limits.maxCostUsd) return 'cost';
    if (limits.maxDeviceSeconds !== undefined && this.deviceMs >= limits.maxDeviceSeconds * 1000) {
      return 'device-seconds';
    }
    return this.parent?.stopReason() ?? null;
  }

  /** Takes one candidate slot; false (and nothing taken) when a limit is used up. */
  reserveCandidate(): boolean {
    if (this.stopReason() !== null) return false;
    if (this.parent && !this.parent.reserveCandidate()) return false;
    this.candidates += 1;
    return true;
  }

  /** Gives back a reserved slot that produced no candidate (the model call failed). */
  releaseCandidate(): void {
    this.candidates = Math.max(0, this.candidates - 1);
    this.parent?.releaseCandidate();
  }

  /** Adds the tokens and cost of one model call. */
  recordModelUsage(tokens: number, costUsd: number | null): void {
    this.tokens += tokens;
    this.costUsd += costUsd ?? 0;
    this.parent?.recordModelUsage(tokens, costUsd);
  }

  /** Adds the time one evaluation held a device, in milliseconds. */
  recordDeviceTime(durationMs: number): void {
    this.deviceMs += durationMs;
    this.parent?.recordDeviceTime(durationMs);
  }

  /** Notes the speedup of a correct candidate; the target stops this budget only, not the parent. */
  recordSpeedup(speedup: number | null): void {
    if (speedup === null) return;
    if (this.bestSpeedup === null || speedup > this.bestSpeedup) this.bestSpeedup = speedup;
  }

  /** Remaining wall-clock time in ms (`Infinity` without a limit), for timeouts of model calls. */
  remainingWallMs(): number {
    const own = this.limits.maxWallMs === undefined ? Infinity : this.limits.maxWallMs - (this.now() - this.startedAtMs);
    return Math.min(Math.max(own, 0), this.parent?.remainingWallMs() ?? Infinity);
  }

  usage(): BudgetUsage {
    return {
      candidates: this.candidates,
      tokens: this.tokens,
      costUsd: this.costUsd,
      deviceMs: this.deviceMs,
      elapsedMs: this.now() - this.startedAtMs,
      bestSpeedup: this.bestSpeedup,
    };
  }
}
