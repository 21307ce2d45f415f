import path from 'node:path';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { z } from 'zod';
import { choiceFlag } from '../flags/flag-schemas.js';
import { listCatalogProblems } from '../../agent/run/problem-catalog.js';
import { selectProblems } from '../../agent/run/problem-selection.js';
import { SuiteError } from '../../agent/run/suite-error.js';
import { REPOSITORY_ROOT, WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { PRECISIONS, PRESETS, TOLERANCE_PROFILES } from '../../core/verdict.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import type { FindingLevel, ProblemAudit } from '../../eval/problem/problem-audit.js';
import { auditProblemFile, type ProblemAuditorOptions } from '../../eval/problem/problem-auditor.js';
import { overridesForProblems } from '../sizing/problem-overrides.js';
import { collectRepeated } from '../flags/repeated-option.js';
import { declaredToleranceWins, toleranceFor } from '../../core/tolerance.js';
import { formatTextTable } from '../../core/text-table.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { pythonExecutable } from '../io/python-executable.js';
import { addSuiteOptions, resolveSuite, suiteFlagsShape } from '../flags/suite-options.js';
import { UsageError } from '../io/usage-error.js';

/** What `kforge problems` needs beyond its io; tests replace any of it. */
export interface ProblemsCommandDependencies extends Partial<CliIo> {
  /** The shipped suite. Default `<repo>/problems`. */
  suiteFolder?: string;
  /** Default: `auditProblemFile` (the worker's audit command). */
  auditProblem?: (problemPath: string, options: ProblemAuditorOptions) => Promise<ProblemAudit>;
}

const positive = (flag: string, integer: boolean) =>
  z
    .string()
    .refine((text) => (integer ? /^\+?\d+$/ : /^\+?(\d+\.?\d*|\.\d+)$/).test(text.trim()) && Number(text) > 0, {
      error: (issue) => `expected \`${flag}\` to be a positive ${integer ? 'integer' : 'number'}, got \`${String(issue.input)}\``,
    })
    .transform(Number);

const listOptionsSchema = z.object({ json: z.boolean().default(false), ...suiteFlagsShape });

const auditOptionsSchema = z.object({
  preset: choiceFlag('--preset', PRESETS).default('cpu'),
  precision: choiceFlag('--precision', PRECISIONS).default('fp32'),
  tolerance: choiceFlag('--tolerance', TOLERANCE_PROFILES).default('kernelbench'),
  timeout: positive('--timeout', false).default(300),
  jobs: positive('--jobs', true).default(1),
  json: z.boolean().default(false),
  set: z.array(z.string()).default([]),
  ...suiteFlagsShape,
});

function parse<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  return parsed.data;
}

/** Left-aligned columns two spaces apart. */
function table(header: string[], rows: string[][]): string {
  return formatTextTable([header, ...rows]).join('\n');
}

/** Runs `work` over the items, at most `jobs` at once; results in item order. */
async function mapLimited<T, R>(items: readonly T[], jobs: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, lane));
  return results;
}

function statusOf(audit: ProblemAudit): 'ok' | FindingLevel {
  for (const level of ['error', 'warning', 'note'] as const) if (audit.findings.some((finding) => finding.level === level)) return level;
  return 'ok';
}

async function runList(io: CliIo, rawOptions: unknown, dependencies: ProblemsCommandDependencies): Promise<number> {
  const options = parse(listOptionsSchema, rawOptions);
  const catalog = await listCatalogProblems(dependencies.suiteFolder ?? path.join(REPOSITORY_ROOT, 'problems'));
  const listed = options.problems ? new Set(await resolveSuite([], { problems: options.problems }, io.cwd)) : null;
  const problems = selectProblems(listed ? catalog.filter((problem) => listed.has(problem.path)) : catalog, options, (problem) => problem.path, io.cwd);
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ problems: problems.map(({ level, name, path: file, presets, summary }) => ({ level, name, path: file, presets, summary })) })}\n`,
    );
    return 0;
  }
  const rows = problems.map((problem) => [problem.level, problem.name, problem.presets.join(', ') || '—', problem.summary]);
  io.stdout.write(`${table(['level', 'name', 'presets', 'what'], rows)}\n${problems.length} problems\n`);
  return 0;
}

async function runAudit(io: CliIo, inputs: string[], rawOptions: unknown, dependencies: ProblemsCommandDependencies): Promise<number> {
  const options = parse(auditOptionsSchema, rawOptions);
  const files = await resolveSuite(inputs, options, io.cwd, [dependencies.suiteFolder ?? path.join(REPOSITORY_ROOT, 'problems')]);
  const auditorOptions: ProblemAuditorOptions = {
    python: pythonExecutable(io.environment),
    workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    environment: io.environment,
    preset: options.preset,
    precision: options.precision,
    tolerance: toleranceFor(options.tolerance, options.precision),
    declaredTolerance: declaredToleranceWins(options.tolerance),
    timeoutMs: options.timeout * 1000,
  };
  // `--set` applies to each problem that has the constant, or to the one it names (problem-overrides.ts).
  const given = await overridesForProblems(files, options.set, io, 'kforge problems audit');
  const shown = (file: string): string => path.relative(io.cwd, file) || file;
  const audits = await mapLimited(files, options.jobs, async (file) => {
    const audit = await (dependencies.auditProblem ?? auditProblemFile)(file, { ...auditorOptions, overrides: given.get(file) ?? {} });
    io.stderr.write(`kforge problems audit: ${shown(file)} ${statusOf(audit)} (${(audit.durationMs / 1000).toFixed(1)} s)\n`);
    return audit;
  });
  const withErrors = audits.filter((audit) => statusOf(audit) === 'error').length;
  const withWarnings = audits.filter((audit) => statusOf(audit) === 'warning').length;
  if (options.json) {
    const problems = audits.map((audit) => ({
      problem: audit.problemPath,
      status: statusOf(audit),
      findings: audit.findings,
      audit: audit.audit,
      duration_ms: audit.durationMs,
    }));
    io.stdout.write(`${JSON.stringify({ problems, errors: withErrors, warnings: withWarnings })}\n`);
  } else {
    const rows = audits.flatMap((audit) =>
      audit.findings.length === 0
        ? [[shown(audit.problemPath), 'ok', '—', '—']]
        : audit.findings.map((finding, index) => [index === 0 ? shown(audit.problemPath) : '', finding.level, finding.check, finding.message]),
    );
    io.stdout.write(
      `${table(['problem', 'status', 'check', 'finding'], rows)}\n${audits.length} problems audited: ${withErrors} with errors, ${withWarnings} with warnings\n`,
    );
  }
  return withErrors > 0 ? EXIT.notCorrect : 0;
}

function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof EvaluatorSetupError) {
    io.stderr.write(`kforge problems: ${error.message}${error.hint ? `; ${error.hint}` : ''}\n`);
    return EXIT.usage;
  }
  if (!(error instanceof UsageError) && !(error instanceof SuiteError)) throw error;
  io.stderr.write(`kforge problems: ${error.message}\n`);
  return EXIT.usage;
}

/**
 * Adds `kforge problems list [--json]` (the shipped suite: level, name, presets, what each
 * computes) and `kforge problems audit [PATHS...] [--json]`: the worker's audit of each problem
 * (the shipped suite when no path is given) with its findings. `audit` exits 1 when a problem has
 * an error-level finding, 0 otherwise, 2 for misuse or a Python that cannot run the worker.
 */
export function registerProblemsCommand(program: Command, dependencies: ProblemsCommandDependencies = {}): Command {
  const problems = program.command('problems').description(COMMAND_DESCRIPTIONS.problems);
  const act = (work: (io: CliIo) => Promise<number>) => async (): Promise<void> => {
    const io = resolveCliIo(dependencies);
    try {
      io.setExitCode(await work(io));
    } catch (error) {
      io.setExitCode(reportFailure(error, io));
    }
  };
  const list = problems
    .command('list')
    .description('the shipped problems with their level, name and presets')
    .option('--json', 'print one JSON object { problems } on stdout')
    .action((rawOptions: unknown) => act((io) => runList(io, rawOptions, dependencies))());
  addSuiteOptions(list);
  const audit = problems
    .command('audit')
    .description("run the worker's audit (does the problem load and run; does a trivial output pass its tolerance) on problem files")
    .argument('[paths...]', 'problem files or folders of them (default: the shipped suite)')
    .option('--preset <preset>', `${PRESETS.join(' or ')} (default cpu: the audit runs on the CPU)`)
    .option('--precision <precision>', `${PRECISIONS.join(', ')} (default fp32)`)
    .option('--tolerance <profile>', `${TOLERANCE_PROFILES.join(' or ')} (default kernelbench)`)
    .option('--timeout <seconds>', "limit on one problem's audit (default 300)")
    .option('--jobs <n>', 'audits at once (default 1)')
    .option('--json', 'print one JSON object { problems, errors, warnings } on stdout')
    .option(
      '--set <[PROBLEM:]NAME=VALUE>',
      'replace a module constant of each problem that has it, e.g. batch_size=16, or with PROBLEM: of that one (repeatable; docs/sizes.md)',
      collectRepeated,
      [] as string[],
    )
    .action((paths: string[], rawOptions: unknown) => act((io) => runAudit(io, paths, rawOptions, dependencies))());
  addSuiteOptions(audit);
  return problems;
}
