import type { CandidateNode } from '../../../src/server/api-types';

export interface ProgressSeries {
  /** 1-based position among evaluated candidates, in evaluation order. */
  index: number[];
  /** Minutes from the run's start to each evaluation. */
  minutes: number[];
  /** Best speedup (vs the best baseline) so far; null until something is correct. */
  best: Array<number | null>;
  /** This candidate's own speedup, when correct. */
  own: Array<number | null>;
  ids: number[];
}

/** The progress of a problem's search: best speedup so far after each evaluation. */
export function bestSoFar(candidates: readonly CandidateNode[], runStartedAt: string): ProgressSeries {
  const evaluated = candidates
    .filter((node) => node.evaluatedAt !== null)
    .sort((a, b) => Date.parse(a.evaluatedAt!) - Date.parse(b.evaluatedAt!) || a.id - b.id);
  const start = Date.parse(runStartedAt);
  const series: ProgressSeries = { index: [], minutes: [], best: [], own: [], ids: [] };
  let best: number | null = null;
  evaluated.forEach((node, position) => {
    const speedup = node.verdict === 'correct' ? (node.speedupVsBest ?? node.speedupVsEager) : null;
    if (speedup !== null && (best === null || speedup > best)) best = speedup;
    series.index.push(position + 1);
    series.minutes.push(Math.max(0, (Date.parse(node.evaluatedAt!) - start) / 60_000));
    series.best.push(best);
    series.own.push(speedup);
    series.ids.push(node.id);
  });
  return series;
}
