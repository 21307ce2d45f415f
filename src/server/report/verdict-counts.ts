import { VERDICTS, type Verdict } from '../../core/verdict.js';

/** Zero for every verdict, in the order of docs/spec.md section 3. */
export function emptyVerdictCounts(): Record<Verdict, number> {
  return Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as Record<Verdict, number>;
}
