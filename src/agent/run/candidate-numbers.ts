import type { Attempt } from '../search/state/attempt.js';

/**
 * The numbers progress views give a problem's candidates (`building #2`): each reply that took a
 * slot of `--max-candidates` gets the next number, 1, 2, …, in the order the replies came (a reply
 * without code takes its number too), so a candidate's number matches the candidate count beside
 * it. The store's ids, unique across the whole store, are what `kforge runs show` and the
 * dashboard name instead.
 */
export class CandidateNumbers {
  #repliesKept = 0;
  readonly #numbers = new Map<number, number>();

  /** Numbers the attempts a resumed problem already made, in their order. */
  constructor(history: readonly Attempt[]) {
    for (const attempt of history) {
      if (attempt.kind === 'model-failed') continue;
      this.#repliesKept += 1;
      if (attempt.kind === 'evaluated') this.#numbers.set(attempt.candidate.id, this.#repliesKept);
    }
  }

  /** A reply that took a slot came: its number. */
  nextReply(): number {
    this.#repliesKept += 1;
    return this.#repliesKept;
  }

  /** Names a stored candidate with its reply's number. */
  assign(candidateId: number, number: number): void {
    this.#numbers.set(candidateId, number);
  }

  /** A candidate's number; one not seen before (left pending by a stopped run, its slot counted on resume) takes the next. */
  of(candidateId: number): number {
    let number = this.#numbers.get(candidateId);
    if (number === undefined) {
      number = this.nextReply();
      this.#numbers.set(candidateId, number);
    }
    return number;
  }
}
