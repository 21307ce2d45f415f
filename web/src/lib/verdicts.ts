import type { Verdict } from '../../../src/core/verdict';
import { PENDING_COLOR, VERDICT_COLORS, verdictLabel } from '../../../src/server/report/verdict-colors';

export type { Verdict };
export { PENDING_COLOR, VERDICT_COLORS, verdictLabel };

/** Colour of a candidate's dot: its verdict's, or grey while not evaluated. */
export function verdictColor(verdict: Verdict | null): string {
  return verdict === null ? PENDING_COLOR : VERDICT_COLORS[verdict];
}
