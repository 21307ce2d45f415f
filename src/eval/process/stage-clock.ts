import { performance } from 'node:perf_hooks';

/** What a {@link StageClock} measures a running stage by. */
export interface StageClockOptions {
  /** Called once when the stage's counted time reaches its limit; with that limit, ms. */
  onExpire: (limitMs: number) => void;
  /** A monotonic clock in ms (default `performance.now`). */
  now?: () => number;
}

/**
 * The limit of one running stage, on a clock that can be paused: while kforge itself works for the
 * worker (the judge taking and judging a handed-over output while the candidate waits for it), the
 * time is not the worker's and is not counted. The limit can change while the stage runs (it is
 * sized once the reference has measured the problem's pace): the stage then ends at the new limit,
 * counted from its start, or at once when that has already passed.
 *
 * @example
 * const clock = new StageClock({ onExpire: (limitMs) => kill(limitMs) });
 * clock.start(300_000);
 * clock.pause(); await judge(); clock.resume();
 * clock.stop();
 */
export class StageClock {
  readonly #onExpire: (limitMs: number) => void;
  readonly #now: () => number;
  #limitMs: number | null = null;
  /** Counted ms before the current run of the clock (the time up to the last pause). */
  #countedMs = 0;
  /** When the clock last resumed (or started); null while paused or stopped. */
  #runningSinceMs: number | null = null;
  #timer: NodeJS.Timeout | undefined;
  #pauses = 0;

  constructor(options: StageClockOptions) {
    this.#onExpire = options.onExpire;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Whether a stage is being timed. */
  get running(): boolean {
    return this.#limitMs !== null;
  }

  /** The running stage's limit, ms (null when none runs). */
  get limitMs(): number | null {
    return this.#limitMs;
  }

  /** Time counted against the limit so far, ms (pauses left out). */
  countedMs(): number {
    return this.#countedMs + (this.#runningSinceMs === null ? 0 : this.#now() - this.#runningSinceMs);
  }

  /** Starts timing a stage with `limitMs` (a pause asked for before it still holds). */
  start(limitMs: number): void {
    this.stop();
    this.#limitMs = limitMs;
    this.#countedMs = 0;
    this.#runningSinceMs = this.#pauses > 0 ? null : this.#now();
    this.#arm();
  }

  /** Stops timing (the stage ended or failed). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#limitMs = null;
    this.#countedMs = 0;
    this.#runningSinceMs = null;
  }

  /** Stops counting until {@link resume}; pauses nest. */
  pause(): void {
    this.#pauses += 1;
    if (this.#pauses > 1 || this.#runningSinceMs === null) return;
    this.#countedMs += this.#now() - this.#runningSinceMs;
    this.#runningSinceMs = null;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Counts again once every {@link pause} is resumed. */
  resume(): void {
    if (this.#pauses === 0) return;
    this.#pauses -= 1;
    if (this.#pauses > 0 || this.#limitMs === null) return;
    this.#runningSinceMs = this.#now();
    this.#arm();
  }

  /** A new limit for the running stage, counted from its start (nothing when no stage runs). */
  setLimit(limitMs: number): void {
    if (this.#limitMs === null) return;
    this.#limitMs = limitMs;
    if (this.#runningSinceMs !== null) this.#arm();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#limitMs === null || this.#runningSinceMs === null) return;
    const limitMs = this.#limitMs;
    const leftMs = Math.max(0, limitMs - this.countedMs());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#onExpire(limitMs);
    }, leftMs);
  }
}
