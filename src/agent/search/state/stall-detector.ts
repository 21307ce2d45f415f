import { z } from 'zod';
import { STALL_POLICIES } from './stall-policies.js';

export { STALL_POLICIES } from './stall-policies.js';

export const stallPolicySchema = z.enum(STALL_POLICIES);
export type StallPolicy = z.infer<typeof stallPolicySchema>;

export interface StallDetectorOptions {
  /** Candidates in a row without a better one before the problem counts as stalled. */
  patience: number;
  policy: StallPolicy;
  /** Candidates already counted since the last improvement (a resumed run). Default 0. */
  sinceImprovement?: number;
}

/** A stall: how many candidates went by without improvement, and what to do about it. */
export interface Stall {
  candidatesWithoutImprovement: number;
  policy: StallPolicy;
}

/**
 * Counts candidates since the last improvement and reports a stall once `patience` is reached.
 * The count then starts again, so under `continue` a long plateau is reported every `patience`
 * candidates rather than once per candidate.
 */
export class StallDetector {
  private sinceImprovement: number;

  constructor(private readonly options: StallDetectorOptions) {
    if (!Number.isInteger(options.patience) || options.patience < 1) {
      throw new RangeError(`expected the stall patience to be a positive integer, got ${options.patience}`);
    }
    this.sinceImprovement = options.sinceImprovement ?? 0;
  }

  /** Candidates since the last improvement (or the last reported stall). */
  get count(): number {
    return this.sinceImprovement;
  }

  /** Records one candidate (a reply without code counts); returns the stall it completes, if any. */
  observe(improved: boolean): Stall | null {
    if (improved) {
      this.sinceImprovement = 0;
      return null;
    }
    this.sinceImprovement += 1;
    if (this.sinceImprovement < this.options.patience) return null;
    const stall = { candidatesWithoutImprovement: this.sinceImprovement, policy: this.options.policy };
    this.sinceImprovement = 0;
    return stall;
  }
}
