import type { Attempt } from '../state/attempt.js';
import { medianMs, speedupOf } from '../selection/candidate-ranking.js';
import { formatMs, formatSpeedup } from '../../../core/number-format.js';

/** One line about an attempt, for the "attempts so far" part of a prompt. */
export function describeAttempt(attempt: Attempt): string {
  const origin = [
    `round ${attempt.lineage.round}`,
    attempt.lineage.parentCandidateId === null ? null : `from #${attempt.lineage.parentCandidateId}`,
    attempt.lineage.idea ? `idea "${attempt.lineage.idea.label}"` : null,
  ]
    .filter(Boolean)
    .join(', ');
  if (attempt.kind === 'no-code') return `(${origin}) reply without usable code`;
  if (attempt.kind === 'model-failed') return `(${origin}) the model call failed`;
  const { result } = attempt;
  const name = `#${attempt.candidate.id} (${origin})`;
  if (result.verdict === 'correct' && result.timing) {
    // A problem folder's sweep: the geometric means over its shapes (medianMs, the speedups).
    const shapes = result.shapes && result.shapes.length > 1 ? ` (geometric mean over ${result.shapes.length} shapes)` : '';
    return `${name} correct, ${formatMs(medianMs(result) ?? result.timing.candidate_ms.median)}, ${formatSpeedup(speedupOf(result, 'eager'))} vs eager${shapes}`;
  }
  const reason = result.reasons[0]?.message ?? result.diagnostics.first_error ?? '';
  return `${name} ${result.verdict}${reason ? `: ${reason.slice(0, 160)}` : ''}`;
}

/** The last `count` attempts (failed model calls left out), one line each, oldest first. */
export function recentHistory(history: readonly Attempt[], count: number): string[] {
  return history
    .filter((attempt) => attempt.kind !== 'model-failed')
    .slice(-count)
    .map(describeAttempt);
}
