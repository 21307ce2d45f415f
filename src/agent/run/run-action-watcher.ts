import type { Action, RunStore } from '../../store/run-store.js';

/** How often a running search reads the actions people recorded (dashboard, API). Milliseconds. */
export const DEFAULT_ACTION_POLL_MS = 1000;

export interface RunActionWatcherOptions {
  store: RunStore;
  runId: string;
  /** Actions with this id or lower are history (recorded before this process took the run). */
  afterId: number;
  /** Called once per new action, in id order; the next poll waits for it. */
  onAction: (action: Action) => Promise<void> | void;
  /** Told about a poll or handler that threw; the watcher keeps polling. */
  onError: (error: unknown) => void;
  intervalMs?: number;
}

/**
 * Polls a run's actions while its search runs, so a stop, a hint or an edit recorded by another
 * process (`kforge serve`) reaches the search within one interval. Actions are handled one at a
 * time, in the order they were recorded, each exactly once per process.
 */
export class RunActionWatcher {
  readonly #options: RunActionWatcherOptions;
  #lastId: number;
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #closed = false;

  constructor(options: RunActionWatcherOptions) {
    this.#options = options;
    this.#lastId = options.afterId;
  }

  /** The highest action id handled (or skipped as history). */
  get lastId(): number {
    return this.#lastId;
  }

  /** The id of the newest action of the run, 0 when it has none: pass it as `afterId`. */
  static async latestActionId(store: RunStore, runId: string): Promise<number> {
    const actions = await store.listActions(runId);
    return actions.at(-1)?.id ?? 0;
  }

  start(): void {
    if (this.#closed || this.#timer) return;
    this.#schedule();
  }

  /** Reads and handles the actions recorded since the last poll. */
  poll(): Promise<void> {
    this.#polling ??= this.#pollOnce().finally(() => {
      this.#polling = null;
    });
    return this.#polling;
  }

  /** Stops polling and waits for a poll in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#polling;
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.poll().finally(() => this.#schedule());
    }, this.#options.intervalMs ?? DEFAULT_ACTION_POLL_MS);
    this.#timer.unref();
  }

  async #pollOnce(): Promise<void> {
    const { store, runId, onAction, onError } = this.#options;
    let actions: Action[];
    try {
      actions = await store.listActions(runId, { afterId: this.#lastId });
    } catch (error) {
      onError(error);
      return;
    }
    for (const action of actions) {
      if (this.#closed) return;
      this.#lastId = Math.max(this.#lastId, action.id);
      try {
        await onAction(action);
      } catch (error) {
        onError(error);
      }
    }
  }
}
