import type { CorrectnessSummary, EvaluationResult, ShapeGeomean, ShapeOutcome, ShapeTiming, Verdict } from '../../core/verdict.js';
import { shapeLabel, type ProblemFolderShape } from './problem-folder.js';

/** One shape of a sweep and what its evaluation gave. */
export interface EvaluatedShape {
  shape: ProblemFolderShape;
  /** The module constants it was evaluated with: the shape's, then the caller's (which win). */
  overrides: Readonly<Record<string, number | boolean>>;
  result: EvaluationResult;
}

/** Checks whose failure is the command's misuse, the same at every shape: their reasons stay as the worker wrote them. */
const COMMAND_CHECKS = new Set(['problem-override']);

/**
 * Verdicts that every shape would give alike (the candidate does not build, a file is unusable):
 * a sweep stops at the first shape that ends so, instead of evaluating the rest to the same end.
 */
export const SWEEP_ENDING_VERDICTS: ReadonlySet<Verdict> = new Set(['compile_error', 'invalid_input']);

function shapeTiming(result: EvaluationResult): ShapeTiming | undefined {
  if (result.verdict !== 'correct' || !result.timing) return undefined;
  const timing = result.timing;
  return {
    candidate_median_ms: timing.candidate_ms.median,
    eager_median_ms: timing.eager_ms?.median ?? null,
    compile_median_ms: timing.compile_ms?.median ?? null,
    speedup_vs_eager: timing.speedup_vs_eager,
    speedup_vs_compile: timing.speedup_vs_compile,
    speedup_vs_best: timing.speedup_vs_best,
  };
}

function outcomeOf({ shape, overrides, result }: EvaluatedShape): ShapeOutcome {
  const timing = shapeTiming(result);
  return {
    index: shape.index,
    values: { ...shape.values },
    overrides: { ...overrides },
    unused: [...shape.unused],
    verdict: result.verdict,
    reasons: result.reasons.map((reason) => ({ ...reason })),
    ...(result.correctness ? { max_abs_error: result.correctness.max_abs_error, max_rel_error: result.correctness.max_rel_error } : {}),
    ...(timing ? { timing } : {}),
  };
}

/** The geometric mean of positive figures; null when any is missing (a geomean over some shapes would pass for all of them). */
export function geometricMean(values: ReadonlyArray<number | null | undefined>): number | null {
  if (values.length === 0 || values.some((value) => typeof value !== 'number' || !(value > 0))) return null;
  return Math.exp((values as number[]).reduce((sum, value) => sum + Math.log(value), 0) / values.length);
}

function largest(values: ReadonlyArray<number | null | undefined>): number | null {
  const known = values.filter((value): value is number => typeof value === 'number');
  return known.length === 0 ? null : Math.max(...known);
}

/**
 * The error profile over every shape judged: trials and passes summed, the largest errors, each
 * trial's detail marked with its shape (`shape`); tolerance as the lead shape judged it.
 */
function sweepCorrectness(evaluated: readonly EvaluatedShape[], lead: EvaluationResult): CorrectnessSummary | undefined {
  const judged = evaluated.filter((entry) => entry.result.correctness);
  if (judged.length === 0 || !lead.correctness) return lead.correctness;
  const summaries = judged.map((entry) => entry.result.correctness!);
  const mismatches = summaries.map((summary) => summary.mismatch_count).filter((count): count is number => count !== undefined);
  const twins = summaries.map((summary) => summary.fp64).filter((twin) => twin !== null && twin !== undefined);
  const details = judged.flatMap((entry) => (entry.result.correctness!.trial_details ?? []).map((trial) => ({ ...trial, shape: entry.shape.index })));
  return {
    ...lead.correctness,
    trials: summaries.reduce((sum, summary) => sum + summary.trials, 0),
    passed: summaries.reduce((sum, summary) => sum + summary.passed, 0),
    max_abs_error: largest(summaries.map((summary) => summary.max_abs_error)),
    max_rel_error: largest(summaries.map((summary) => summary.max_rel_error)),
    ...(mismatches.length > 0 ? { mismatch_count: mismatches.reduce((sum, count) => sum + count, 0) } : {}),
    ...(twins.length > 0
      ? { fp64: { max_abs_error: largest(twins.map((twin) => twin.max_abs_error)), max_rel_error: largest(twins.map((twin) => twin.max_rel_error)) } }
      : {}),
    ...(details.length > 0 ? { trial_details: details } : {}),
  };
}

/** Wall time of each stage summed over the shapes, ms. */
function sweepStages(evaluated: readonly EvaluatedShape[]): Record<string, number> | undefined {
  const stages: Record<string, number> = {};
  for (const { result } of evaluated) for (const [stage, ms] of Object.entries(result.stages ?? {})) stages[stage] = (stages[stage] ?? 0) + ms;
  return Object.keys(stages).length > 0 ? stages : undefined;
}

/** The geometric means of a correct sweep's speedups, or undefined when a shape was not timed. */
function sweepGeomean(outcomes: readonly ShapeOutcome[]): ShapeGeomean | undefined {
  if (outcomes.some((outcome) => !outcome.timing)) return undefined;
  const figures = outcomes.map((outcome) => outcome.timing!);
  return {
    shapes: outcomes.length,
    speedup_vs_eager: geometricMean(figures.map((timing) => timing.speedup_vs_eager)),
    speedup_vs_compile: geometricMean(figures.map((timing) => timing.speedup_vs_compile)),
    speedup_vs_best: geometricMean(figures.map((timing) => timing.speedup_vs_best)),
  };
}

/**
 * One result for a problem folder's sweep (docs/problems.md): `correct` only when every shape is;
 * otherwise the first shape that is not, with its verdict, its reasons each naming the shape
 * (`shape 2 (M=32, N=8192, K=8192): …`) and its diagnostics. Every shape's verdict and figures are
 * in `shapes`; the error profile covers every shape judged; stage times are summed. A correct
 * sweep keeps the first shape's timing statistics, with its speedups replaced by the geometric
 * means over the shapes (also in `shape_geomean`).
 *
 * @throws Error for an empty sweep (a caller's bug: a sweep evaluates at least one shape).
 */
export function combineShapeResults(evaluated: readonly EvaluatedShape[]): EvaluationResult {
  const first = evaluated[0];
  if (!first) throw new Error('a shape sweep needs at least one evaluated shape');
  const outcomes = evaluated.map(outcomeOf);
  const failing = evaluated.find((entry) => entry.result.verdict !== 'correct');
  const lead = failing ?? first;
  const correctness = sweepCorrectness(evaluated, lead.result);
  const stages = sweepStages(evaluated);
  const shared = {
    ...(correctness ? { correctness } : {}),
    ...(stages ? { stages } : {}),
    problem_overrides: { ...lead.overrides },
    shapes: outcomes,
  };
  if (failing) {
    const label = shapeLabel(failing.shape);
    const reasons = failing.result.reasons.map((reason) => (COMMAND_CHECKS.has(reason.check) ? reason : { ...reason, message: `${label}: ${reason.message}` }));
    return { ...failing.result, ...shared, reasons } as EvaluationResult;
  }
  const result = first.result;
  if (result.verdict !== 'correct') throw new Error('unreachable: a sweep without a failing shape leads with a correct one');
  const geomean = sweepGeomean(outcomes);
  if (!geomean || !result.timing) return { ...result, ...shared, correctness: correctness ?? result.correctness };
  const timing = {
    ...result.timing,
    speedup_vs_eager: geomean.speedup_vs_eager,
    speedup_vs_compile: geomean.speedup_vs_compile,
    speedup_vs_best: geomean.speedup_vs_best,
  };
  return { ...result, ...shared, correctness: correctness ?? result.correctness, timing, shape_geomean: geomean };
}
