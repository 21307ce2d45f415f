import type { RunComparison, RunReportData } from '../api-schemas/report-schemas.js';

/**
 * Two runs' reports matched problem by problem (by content hash, so renamed files still match);
 * `ratio` is run b's speedup over run a's against the best baseline, where both are correct.
 */
export function compareRuns(a: RunReportData, b: RunReportData): RunComparison {
  const hashes = [...new Set([...a.problems.map((problem) => problem.hash), ...b.problems.map((problem) => problem.hash)])];
  const problems = hashes.map((hash) => {
    const left = a.problems.find((problem) => problem.hash === hash) ?? null;
    const right = b.problems.find((problem) => problem.hash === hash) ?? null;
    const known = (left ?? right)!;
    const ratio = left?.speedupVsBest && right?.speedupVsBest ? right.speedupVsBest / left.speedupVsBest : null;
    return { hash, name: known.name, level: known.level, a: left, b: right, ratio };
  });
  return { a, b, problems, shared: problems.filter((problem) => problem.a && problem.b).length };
}
