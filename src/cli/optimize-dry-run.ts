import path from 'node:path';
import type { OptimizePlan } from '../agent/run/optimize-plan.js';
import { formatTextTable } from '../core/text-table.js';
import type { ProblemAudit } from '../eval/problem/problem-audit.js';
import type { ProblemAuditorOptions } from '../eval/problem/problem-auditor.js';
import { declaredToleranceWins, toleranceFor } from '../eval/run/tolerance.js';
import type { CliIo } from './cli-io.js';
import { formatBytes, formatTensor, sizeEstimateFromAudit, type ProblemSizeEstimate } from './problem-size-estimate.js';

export interface DryRunOptions {
  /** Audits one problem file (the worker's audit command). */
  auditProblem: (problemPath: string, options: ProblemAuditorOptions) => Promise<ProblemAudit>;
  /** The auditor's Python, worker folder and environment. */
  auditor: Pick<ProblemAuditorOptions, 'python' | 'workerDirectory' | 'environment'>;
  json: boolean;
}

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

function summaryOf(audit: ProblemAudit): string {
  if (audit.findings.length === 0) return 'ok';
  return audit.findings.map((finding) => `${finding.level}: ${finding.check} — ${finding.message}`).join('; ');
}

/**
 * `kforge optimize --dry-run`: what the run would do, without calling a model or writing the
 * store. Each problem is audited by the worker on this machine's CPU at the run's preset and
 * precision (does it load and run; does a trivial output pass its tolerance), which also measures
 * its tensors; then one table: problem, inputs, estimated memory, audit findings.
 *
 * @returns the exit status: 1 when a problem has an error-level finding (it would waste the run), else 0.
 */
export async function runOptimizeDryRun(io: CliIo, plan: OptimizePlan, options: DryRunOptions): Promise<number> {
  const { evaluation } = plan;
  // The preset an evaluation would use: the run's, else the backend's own (as the evaluator picks it).
  const preset = evaluation.preset ?? (evaluation.backend === 'cpu' ? 'cpu' : 'gpu');
  const auditOptions: ProblemAuditorOptions = {
    ...options.auditor,
    preset,
    precision: evaluation.precision,
    tolerance: toleranceFor(evaluation.tolerance, evaluation.precision),
    declaredTolerance: declaredToleranceWins(evaluation.tolerance),
    // kforge optimize has no flag for the audit's limit: name the command that does.
    raiseLimitHint: 'audit it alone with a longer limit: kforge problems audit PROBLEM --timeout SECONDS',
  };
  const shown = (file: string): string => path.relative(io.cwd, file) || file;
  const problems: DryRunProblem[] = [];
  for (const file of plan.problems) {
    const overrides = plan.problemOverrides[file];
    const audit = await options.auditProblem(file, overrides ? { ...auditOptions, overrides } : auditOptions);
    io.stderr.write(`kforge optimize --dry-run: audited ${shown(file)} (${(audit.durationMs / 1000).toFixed(1)} s)\n`);
    problems.push({ path: file, size: sizeEstimateFromAudit(audit.audit), audit });
  }
  const errors = problems.filter((problem) => problem.audit.findings.some((finding) => finding.level === 'error')).length;
  const warnings = problems.filter((problem) => problem.audit.findings.some((finding) => finding.level === 'warning')).length;
  if (options.json) {
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
    return errors > 0 ? 1 : 0;
  }
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
  ];
  io.stdout.write(`${[...header, '', ...table, '', ...footer].join('\n')}\n`);
  return errors > 0 ? 1 : 0;
}
