import type { BaselineCache, CachedBaselines } from './baseline-cache.js';

/** One evaluation's view of a {@link SharedBaselineCache}; `release` when the evaluation ends. */
export interface BaselineCacheView extends BaselineCache {
  /** Lets waiters go when this evaluation looked a key up, found nothing and never stored it. */
  release(): void;
}

interface KeyState {
  value: CachedBaselines | null;
  /** Measured (or refreshed) by this process, so good for a refreshing evaluation too. */
  measuredHere: boolean;
  /** An evaluation is measuring this key; others wait for it. */
  measuring: Promise<void> | null;
  done: () => void;
}

/**
 * Baselines measured once per key for every evaluation of a pipeline, however many run at once:
 * the first evaluation that misses a key measures it and the others wait for its result instead of
 * timing the same eager and torch.compile baselines again (the key covers problem, preset,
 * precision, backend, device, versions and the number of timed calls). A view made with
 * `refresh` ignores what was stored before this process measured the key (`--refresh-baselines`:
 * re-timed once per key, then reused by the rest of the batch).
 */
export class SharedBaselineCache {
  readonly #inner: BaselineCache;
  readonly #keys = new Map<string, KeyState>();

  constructor(inner: BaselineCache) {
    this.#inner = inner;
  }

  /** A view for one evaluation. */
  view(options: { refresh?: boolean } = {}): BaselineCacheView {
    const claimed = new Set<string>();
    const refresh = options.refresh === true;
    return {
      get: (key) => this.#get(key, refresh, claimed),
      put: (entry) => this.#put(entry, claimed),
      peek: (key) => this.#peek(key, refresh),
      release: () => {
        for (const key of claimed) this.#settle(key);
        claimed.clear();
      },
    };
  }

  async #get(key: string, refresh: boolean, claimed: Set<string>): Promise<CachedBaselines | null> {
    for (;;) {
      const state = this.#state(key);
      if (state.value && (!refresh || state.measuredHere)) return state.value;
      if (state.measuring) {
        await state.measuring;
        continue;
      }
      state.measuring = new Promise((resolve) => (state.done = resolve));
      claimed.add(key);
      if (refresh) return null;
      const stored = await this.#inner.get(key).catch(() => null);
      if (!stored) return null;
      state.value = stored;
      claimed.delete(key);
      this.#settle(key);
      return stored;
    }
  }

  /** What a `get` would return at once, claiming nothing; null while the key is being measured. */
  async #peek(key: string, refresh: boolean): Promise<CachedBaselines | null> {
    const state = this.#state(key);
    if (state.value && (!refresh || state.measuredHere)) return state.value;
    if (refresh || state.measuring) return null;
    return this.#inner.get(key).catch(() => null);
  }

  async #put(entry: CachedBaselines, claimed: Set<string>): Promise<void> {
    const state = this.#state(entry.key);
    state.value = entry;
    state.measuredHere = true;
    try {
      await this.#inner.put(entry);
    } finally {
      claimed.delete(entry.key);
      this.#settle(entry.key);
    }
  }

  #settle(key: string): void {
    const state = this.#state(key);
    const done = state.done;
    state.measuring = null;
    state.done = () => undefined;
    done();
  }

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      state = { value: null, measuredHere: false, measuring: null, done: () => undefined };
      this.#keys.set(key, state);
    }
    return state;
  }
}
