import type { JobQueueEventName, JobQueueEvents } from './job-queue.js';

type Listener<E extends JobQueueEventName> = (payload: JobQueueEvents[E]) => void;

/**
 * The listeners of a {@link JobQueue}'s events. A listener that throws does not stop the others
 * or the queue: its error goes to `onListenerError` (by default rethrown outside, uncaught, as an
 * EventEmitter's would be).
 */
export class JobQueueListeners {
  readonly #listeners = new Map<JobQueueEventName, Set<Listener<JobQueueEventName>>>();
  readonly #onListenerError: (error: unknown, event: JobQueueEventName) => void;

  constructor(onListenerError?: (error: unknown, event: JobQueueEventName) => void) {
    this.#onListenerError =
      onListenerError ??
      ((error) =>
        queueMicrotask(() => {
          throw error;
        }));
  }

  /** Adds a listener; the returned function removes it. */
  on<E extends JobQueueEventName>(event: E, listener: Listener<E>): () => void {
    let listeners = this.#listeners.get(event);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(event, listeners);
    }
    listeners.add(listener as Listener<JobQueueEventName>);
    return () => listeners.delete(listener as Listener<JobQueueEventName>);
  }

  emit<E extends JobQueueEventName>(event: E, payload: JobQueueEvents[E]): void {
    for (const listener of this.#listeners.get(event) ?? []) {
      try {
        listener(payload);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }
}
