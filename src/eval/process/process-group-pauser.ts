import { signalProcessGroup } from './process-group.js';

/**
 * Keeps the CPU quiet while a timed stage runs on it. Background process groups (candidates that
 * build, warm workers that are importing torch) are registered here; {@link pause} stops them all
 * with SIGSTOP and the function it returns continues them with SIGCONT. A group registered while
 * paused is stopped at once; one removed while paused is continued. Pauses nest.
 *
 * This is how the cpu backend times candidates without builds running beside them: the timed
 * calls (and the eager baseline) see the same idle machine as a one-at-a-time evaluation, while
 * builds use every core the rest of the time. Their stage limits keep running while they are
 * stopped (a timed stage lasts seconds; a build's limit is minutes).
 */
export class ProcessGroupPauser {
  readonly #groups = new Set<number>();
  readonly #now: () => number;
  #depth = 0;
  #pausedSinceMs = 0;
  #pausedMs = 0;
  #pauses = 0;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? (() => performance.now());
  }

  /** Whether background groups are stopped now. */
  get paused(): boolean {
    return this.#depth > 0;
  }

  /** Pauses so far and their total length in ms. */
  stats(): { pauses: number; pausedMs: number; groups: number } {
    const running = this.paused ? this.#now() - this.#pausedSinceMs : 0;
    return { pauses: this.#pauses, pausedMs: this.#pausedMs + running, groups: this.#groups.size };
  }

  /** Registers a background group (a worker's pid, which leads its group). */
  add(groupId: number): void {
    if (this.#groups.has(groupId)) return;
    this.#groups.add(groupId);
    if (this.paused) send(groupId, 'SIGSTOP');
  }

  /** Unregisters a group, continuing it if it was stopped. */
  remove(groupId: number): void {
    if (!this.#groups.delete(groupId)) return;
    if (this.paused) send(groupId, 'SIGCONT');
  }

  /** Stops every background group until the returned function is called (once). */
  pause(): () => void {
    if (this.#depth === 0) {
      this.#pauses += 1;
      this.#pausedSinceMs = this.#now();
      for (const groupId of this.#groups) send(groupId, 'SIGSTOP');
    }
    this.#depth += 1;
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.#depth -= 1;
      if (this.#depth > 0) return;
      this.#pausedMs += this.#now() - this.#pausedSinceMs;
      for (const groupId of this.#groups) send(groupId, 'SIGCONT');
    };
  }
}

function send(groupId: number, signal: NodeJS.Signals): void {
  try {
    signalProcessGroup(groupId, signal);
  } catch {
    // A group that is gone or not ours any more needs nothing.
  }
}
