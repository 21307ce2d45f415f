import { backendModule } from '../../backends/registry.js';
import os from 'node:os';
import path from 'node:path';
import type { OptimizePlan } from '../../agent/run/optimize-plan.js';
import { formatBytes } from '../../core/number-format.js';
import { formatTextTable } from '../../core/text-table.js';
import type { ProblemAudit } from '../../eval/problem/problem-audit.js';
import type { ProblemAuditorOptions } from '../../eval/problem/problem-auditor.js';
import { declaredToleranceWins, toleranceFor } from '../../core/tolerance.js';
import type { CliIo } from '../io/cli-io.js';
import { mapBounded } from './map-bounded.js';
import { formatTensor, sizeEstimateFromAudit, type ProblemSizeEstimate } from './problem-size-estimate.js';

export interface DryRunOptions {
  /** Audits one problem file (the worker's audit command). */
  auditProblem: (problemPath: string, options: ProblemAuditorOptions) => Promise<ProblemAudit>;
  /** The auditor's Python, worker folder and environment. */
  auditor: Pick<ProblemAuditorOptions, 'python' | 'workerDirectory' | 'environment'>;
  json: boolean;
  /** Audits at once. Default: the host's cores (`os.availableParallelism()`). */
  concurrency?: number;
  /** Every audit of the dry run ends within this, ms, from its start. Default {@link DRY_RUN_BUDGET_MS}. */
  budgetMs?: number;
  /** One audit's limit, ms. Default {@link DRY_RUN_AUDIT_LIMIT_MS}. */
  auditLimitMs?: number;
  /** A monotonic clock, ms (default `performance.now`). */
  now?: () => number;
}

/**
 * The dry run's time: its audits run at once up to the host's cores, each within a minute (a problem
 * whose reference is slower than that at these sizes is said to be too slow after its first trial,
 * with a size that fits), and all of them within five minutes; a problem whose audit could not start
 * within the budget is listed as not audited, with the command that audits it alone.
 */
export const DRY_RUN_BUDGET_MS = 300_000;
export const DRY_RUN_AUDIT_LIMIT_MS = 60_000;
/** What a dry run's audit past its limit says to do: flags `kforge optimize` takes, or the command that has `--timeout`. */
export const DRY_RUN_LIMIT_HINT =
  'audit it at smaller sizes (--set NAME=VALUE, or --eval-budget 60s to size each problem by time), or alone with a longer limit: kforge problems audit PROBLEM --timeout SECONDS';
/** An audit is not started with less of the budget left than this, ms (importing torch takes seconds). */
const LEAST_AUDIT_MS = 10_000;

interface DryRunProblem {
  path: string;
  size: ProblemSizeEstimate;
  audit: ProblemAudit;
}

/** The limits a plan puts on each problem, in flag words: `at most 10 candidates, 30 min`. */
function budgetWords(plan: OptimizePlan): string {
  const limits = plan.perProblem;
  const words = [
    limits.maxCandidates === undefined ? null : `${limits.maxCandidates} candidates`,
    limits.maxWallMs === undefined ? null : `${limits.maxWallMs / 60_000} min`,
    limits.targetSpeedup === undefined ? null : `until ${limits.targetSpeedup}x`,
  ].filter((word): word is string => word !== null);
  return words.length === 0 ? 'no per-problem limit' : `at most ${words.join(', ')} per problem`;
}

/** A problem whose audit could not start within the dry run's budget: a warning, not an error of the problem. */
function notAudited(file: string, budgetMs: number): ProblemAudit {
  return {
    problemPath: file,
    audit: null,
    durationMs: 0,
    findings: [
      {
        level: 'warning',
        check: 'not-audited',
        message: `not audited: the dry run's ${Math.round(budgetMs / 1000)} s were spent on the others (audit it alone: kforge problems audit PROBLEM)`,
      },
    ],
  };
}

function summaryOf(audit: ProblemAudit): string {
  if (audit.findings.length === 0) return 'ok';
  return audit.findings.map((finding) => `${finding.level}: ${finding.check} — ${finding.message}`).join('; ');
}

/**
 * `kforge optimize --dry-run`: what the run would do, without calling a model or writing the
 * store. Each problem is audited by the worker on this machine's CPU at the run's preset and
 * precision (does it load and run; does a trivial output pass its tolerance), which also measures
 * its tensors; the audits run at once up to the host's cores, within {@link DRY_RUN_BUDGET_MS};
 * then one table: problem, inputs, estimated memory, audit findings.
 *
 * @returns the exit status: 1 when a problem has an error-level finding (it would waste the run), else 0.
 */
export async function runOptimizeDryRun(io: CliIo, plan: OptimizePlan, options: DryRunOptions): Promise<number> {
  const { evaluation } = plan;
  // The preset an evaluation would use: the run's, else the backend's own (as the evaluator picks it).
  const preset = evaluation.preset ?? backendModule(evaluation.backend).detect.kind;
  const auditOptions: ProblemAuditorOptions = {
    ...options.auditor,
    preset,
    precision: evaluation.precision,
    tolerance: toleranceFor(evaluation.tolerance, evaluation.precision),
    declaredTolerance: declaredToleranceWins(evaluation.tolerance),
    // kforge optimize has no flag for the audit's limit: name the command that does, and the sizes it takes.
    raiseLimitHint: DRY_RUN_LIMIT_HINT,
  };
  const shown = (file: string): string => path.relative(io.cwd, file) || file;
  const now = options.now ?? (() => performance.now());
  const budgetMs = options.budgetMs ?? DRY_RUN_BUDGET_MS;
  const deadlineMs = now() + budgetMs;
  const concurrency = Math.max(1, options.concurrency ?? os.availableParallelism());
  const problems = await mapBounded(plan.problems, concurrency, async (file): Promise<DryRunProblem> => {
    const leftMs = deadlineMs - now();
    if (leftMs < LEAST_AUDIT_MS) return { path: file, size: sizeEstimateFromAudit(null), audit: notAudited(file, budgetMs) };
    const overrides = plan.problemOverrides[file];
    const limited = { ...auditOptions, timeoutMs: Math.floor(Math.min(options.auditLimitMs ?? DRY_RUN_AUDIT_LIMIT_MS, leftMs)) };
    const audit = await options.auditProblem(file, overrides ? { ...limited, overrides } : limited);
    io.stderr.write(`kforge optimize --dry-run: audited ${shown(file)} (${(audit.durationMs / 1000).toFixed(1)} s)\n`);
    return { path: file, size: sizeEstimateFromAudit(audit.audit), audit };
  });
  const errors = problems.filter((problem) => problem.audit.findings.some((finding) => finding.level === 'error')).length;
  const warnings = problems.filter((problem) => problem.audit.findings.some((finding) => finding.level === 'warning')).length;
  if (options.json) writeDryRunJson(io, plan, preset, problems);
  else writeDryRunTable(io, plan, options, { preset, problems, concurrency, budgetMs, errors, warnings, shown });
  return errors > 0 ? 1 : 0;
}

/** `--json`: one object, the run's settings and each problem's sizes and findings. */
function writeDryRunJson(io: CliIo, plan: OptimizePlan, preset: string, problems: DryRunProblem[]): void {
  const { evaluation } = plan;
  const rows = problems.map((problem) => ({
    problem: problem.path,
    inputs: problem.size.inputs,
    outputs: problem.size.outputs,
    estimated_bytes: problem.size.estimatedBytes,
    overrides: plan.problemOverrides[problem.path] ?? {},
    ...(plan.problemFolders[problem.path] ? { shapes: plan.problemFolders[problem.path]!.shapes } : {}),
    findings: problem.audit.findings,
  }));
  io.stdout.write(
    `${JSON.stringify({ dry_run: true, backend: evaluation.backend, preset, precision: evaluation.precision, strategy: plan.strategy, model: plan.model, problems: rows })}\n`,
  );
}

/** What the dry run's table says besides the plan. */
interface DryRunFigures {
  preset: string;
  problems: DryRunProblem[];
  concurrency: number;
  budgetMs: number;
  errors: number;
  warnings: number;
  shown: (file: string) => string;
}

/** The human form: a header with the run's settings, one row per problem, and a footer on the audits. */
function writeDryRunTable(io: CliIo, plan: OptimizePlan, options: DryRunOptions, figures: DryRunFigures): void {
  const { evaluation } = plan;
  const { preset, problems, concurrency, budgetMs, errors, warnings, shown } = figures;
  const model = `${plan.model.provider}${plan.model.model ? `:${plan.model.model}` : ''}`;
  const header = [
    `${problems.length} problem${problems.length === 1 ? '' : 's'} would run (nothing was sent to a model or stored)`,
    `backend ${evaluation.backend}, preset ${preset}, ${evaluation.precision}, tolerance ${evaluation.tolerance}; strategy ${plan.strategy}, model ${model}, ${budgetWords(plan)}`,
  ];
  // A problem folder is audited at reference.py's own constants; its shapes are evaluated one by one.
  const sizes = (file: string): string => {
    const shapes = plan.problemFolders[file]?.shapes.length;
    return [
      ...Object.entries(plan.problemOverrides[file] ?? {}).map(([name, value]) => `${name}=${String(value)}`),
      ...(shapes ? [`${shapes} shape${shapes === 1 ? '' : 's'}`] : []),
    ].join(' ');
  };
  const rows = problems.map((problem) => [
    shown(problem.path) + (sizes(problem.path) ? ` (${sizes(problem.path)})` : ''),
    problem.size.inputs.map(formatTensor).join(', ') || '—',
    problem.size.estimatedBytes === null ? '—' : formatBytes(problem.size.estimatedBytes),
    summaryOf(problem.audit),
  ]);
  const table = formatTextTable([['problem', 'inputs', 'memory', 'audit'], ...rows], { align: ['left', 'left', 'right', 'left'] });
  const footer = [
    `${errors} with errors, ${warnings} with warnings (\`kforge problems audit\` explains the checks)`,
    "memory: one call's inputs and outputs at the run's precision, a lower bound (weights, workspace and the workers' copies come on top)",
    `audits: ${Math.min(concurrency, problems.length)} at once, each within ${Math.round((options.auditLimitMs ?? DRY_RUN_AUDIT_LIMIT_MS) / 1000)} s, all within ${Math.round(budgetMs / 1000)} s`,
  ];
  io.stdout.write(`${[...header, '', ...table, '', ...footer].join('\n')}\n`);
}
