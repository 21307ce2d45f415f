import { ConcurrencyLimit } from '../../llm/usage/concurrency-limit.js';

export interface ConcurrencyLimiterOptions {
  /** Slots per key when `limits` does not name the key. Default 4. */
  defaultLimit?: number;
  /** Slots per key, e.g. `{ openai: 8, anthropic: 2 }`. */
  limits?: Readonly<Record<string, number>>;
}

/**
 * At most N tasks at once per key, the rest waiting in order: one `ConcurrencyLimit` per key.
 * Keyed by provider name for LLM calls (so a search that fans out never floods one provider past
 * what its account allows) and by device slot for evaluations.
 *
 * @example
 * const limiter = new ConcurrencyLimiter({ limits: { openai: 2 } });
 * const reply = await limiter.run('openai', () => model.generate(request), signal);
 */
export class ConcurrencyLimiter {
  private readonly lanes = new Map<string, ConcurrencyLimit>();
  private readonly defaultLimit: number;
  private readonly limits: Readonly<Record<string, number>>;

  constructor(options: ConcurrencyLimiterOptions = {}) {
    this.defaultLimit = options.defaultLimit ?? 4;
    this.limits = options.limits ?? {};
    for (const [key, limit] of Object.entries({ default: this.defaultLimit, ...this.limits })) {
      if (!Number.isInteger(limit) || limit < 1) {
        throw new RangeError(`expected the concurrency limit of '${key}' to be a positive integer, got ${limit}`);
      }
    }
  }

  /** The slot count of a key. */
  limitOf(key: string): number {
    return this.limits[key] ?? this.defaultLimit;
  }

  /** Tasks of a key running now. */
  running(key: string): number {
    return this.lanes.get(key)?.inFlight ?? 0;
  }

  /** Runs `task` once a slot of `key` is free; an abort while waiting rejects (with the signal's reason) without running it. */
  run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = new ConcurrencyLimit(this.limitOf(key));
      this.lanes.set(key, lane);
    }
    return lane.run(task, signal);
  }
}
