import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import type { Precision } from '../../core/verdict.js';
import { CappedOutput } from '../process/capped-output.js';
import { formatBytes } from '../../core/number-format.js';
import { DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS, estimateEvaluationSize } from './size-estimate.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { findingOfFailure, findingsOfAudit, workerAuditFailureSchema, workerAuditSchema, type ProblemAudit } from './problem-audit.js';
import type { Tolerance } from '../../core/tolerance.js';
import { signalProcessGroup, trackProcessGroup, untrackProcessGroup } from '../process/process-group.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';

export interface ProblemAuditorOptions {
  /** The Python to run (`pythonExecutable` of the CLI). */
  python: string;
  /** Folder holding the `kforge_worker` package. */
  workerDirectory: string;
  /** The parent's environment; what reaches the audit is allow-listed as for a worker. */
  environment: NodeJS.ProcessEnv;
  /** A `KFORGE_PRESETS` entry (`cpu`, `gpu`); left out, the problem's own constants. */
  preset?: string;
  /** Default fp32. */
  precision?: Precision;
  /** Default atol = rtol = 0.01 (the kernelbench profile). */
  tolerance?: Tolerance;
  /** A tolerance the problem declares for its output's dtype (`KFORGE_TOLERANCE`) replaces `tolerance`, as under the kernelbench profile. Default false. */
  declaredTolerance?: boolean;
  /**
   * Limit on one problem's audit, in ms (importing torch on a loaded machine is slow): on the size
   * check before it (at most {@link DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS}) and on the audit itself.
   * Default {@link DEFAULT_AUDIT_TIMEOUT_MS}.
   */
  timeoutMs?: number;
  /**
   * How the caller's user raises that limit, for the message of an audit that ran past it: it must
   * name a flag the user's command has. Default `raise --timeout` (`kforge problems audit`).
   */
  raiseLimitHint?: string;
  /** Wait between SIGTERM and SIGKILL when the limit is reached, in ms. Default 5000. */
  killGraceMs?: number;
  /** Module constants replaced before the audit (`--set`); recorded in the audit object. */
  overrides?: Readonly<Record<string, number | boolean>>;
  /**
   * Host memory the audit may use, bytes: a problem whose reference is estimated to need more is
   * not run (a `too-large` finding with sizes that fit). Default: the host's memory; 0: no check.
   */
  capacityBytes?: number;
}

/** One finished child process, execa-style. */
interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
}

/** Default limit on one problem's audit: 300 000 ms. */
const DEFAULT_AUDIT_TIMEOUT_MS = 300_000;

const MISSING_MODULE = /ModuleNotFoundError: No module named '(torch|kforge_worker)'/;
const SETUP_HINT = 'set KFORGE_PYTHON to a Python with PyTorch (scripts/python.sh finds one), or run `kforge doctor`';

/**
 * Runs the audit as the leader of its own process group and, past the limit, signals the whole
 * group (SIGTERM, then SIGKILL after the grace), so nothing the problem started outlives it.
 */
function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; killGraceMs: number },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const stdout = new CappedOutput();
    const stderr = new CappedOutput(64 * 1024);
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const group = child.pid;
    if (group !== undefined) trackProcessGroup(group);
    const signalGroup = (signal: NodeJS.Signals): void => {
      if (group === undefined) child.kill(signal);
      else signalProcessGroup(group, signal);
    };
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const limitTimer = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => signalGroup('SIGKILL'), options.killGraceMs);
    }, options.timeoutMs);
    const settle = (): void => {
      clearTimeout(limitTimer);
      clearTimeout(killTimer);
      if (group === undefined) return;
      // What the audit left running in its group goes with it.
      signalProcessGroup(group, 'SIGKILL');
      untrackProcessGroup(group);
    };
    child.stdout.on('data', (chunk: Buffer) => stdout.append(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.append(chunk));
    child.once('error', (error) => {
      settle();
      reject(error);
    });
    child.once('close', (exitCode, signal) => {
      settle();
      resolve({ exitCode, signal, timedOut, durationMs: Date.now() - startedAt, stdout: stdout.text(), stderr: stderr.text() });
    });
  });
}

function auditArguments(problemPath: string, options: ProblemAuditorOptions, limitMs: number): string[] {
  const tolerance = options.tolerance ?? { atol: 0.01, rtol: 0.01 };
  return [
    '-m',
    'kforge_worker',
    'audit',
    problemPath,
    ...(options.preset ? ['--preset', options.preset] : []),
    '--precision',
    options.precision ?? 'fp32',
    '--atol',
    String(tolerance.atol),
    '--rtol',
    String(tolerance.rtol),
    ...(options.declaredTolerance ? ['--declared-tolerance'] : []),
    ...Object.entries(options.overrides ?? {}).flatMap(([name, value]) => ['--set', `${name}=${String(value)}`]),
    // A reference too slow for the limit says so after its first trial (`audit-too-slow`), with a size that fits.
    '--limit-ms',
    String(limitMs),
    '--started-at-ms',
    String(Date.now()),
  ];
}

/** The `too-large` finding of a problem whose reference cannot fit the host at these sizes, or null (fits, or unknown). */
async function tooLarge(problemPath: string, options: ProblemAuditorOptions): Promise<ProblemAudit | null> {
  const capacity = options.capacityBytes ?? os.totalmem();
  if (!capacity) return null;
  const sized = await estimateEvaluationSize({
    python: options.python,
    workerDirectory: options.workerDirectory,
    environment: options.environment,
    problemPath,
    precision: options.precision ?? 'fp32',
    deviceType: 'cpu',
    overrides: options.overrides,
    capacityBytes: capacity,
    ...(options.preset === 'cpu' || options.preset === 'gpu' ? { preset: options.preset } : {}),
    timing: false,
    // A Python that hangs is stopped at the audit's own limit here too, not only in the audit.
    timeoutMs: Math.min(options.timeoutMs ?? DEFAULT_AUDIT_TIMEOUT_MS, DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS),
  }).catch(() => null);
  if (!sized?.ok || sized.estimate.reference_bytes <= capacity) return null;
  const fit = sized.estimate.fit
    ? Object.entries(sized.estimate.fit.overrides)
        .map(([name, value]) => `--set ${name}=${String(value)}`)
        .join(' ')
    : null;
  return {
    problemPath,
    audit: null,
    durationMs: 0,
    findings: [
      {
        level: 'error',
        check: 'too-large',
        message: `its reference needs about ${formatBytes(sized.estimate.reference_bytes)} at ${options.overrides && Object.keys(options.overrides).length > 0 ? 'these' : 'its own'} sizes (inputs ${formatBytes(sized.estimate.input_bytes)} a set), more than this host's ${formatBytes(capacity)}: audit it at smaller sizes${fit ? ` (${fit} fits)` : ' with --set NAME=VALUE'}`,
      },
    ],
  };
}

/** The last non-empty line of a process's stderr, for one-line messages. */
const lastLine = (text: string): string => text.trim().split('\n').at(-1)?.trim() ?? '';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
}

function auditOf(problemPath: string, result: ProcessResult, limitMs: number, raiseLimitHint: string): ProblemAudit {
  const base = { problemPath, durationMs: result.durationMs };
  if (result.timedOut) {
    return {
      ...base,
      audit: null,
      findings: [
        {
          level: 'error',
          check: 'audit-timeout',
          message: `the audit did not finish within its limit (${limitMs / 1000} s): the reference is too slow at this preset, or the machine too loaded (${raiseLimitHint})`,
        },
      ],
    };
  }
  const output = parseJson(result.stdout);
  const audit = result.exitCode === 0 ? workerAuditSchema.safeParse(output) : null;
  if (audit?.success) return { ...base, audit: audit.data, findings: findingsOfAudit(audit.data) };
  const failure = result.exitCode === 1 ? workerAuditFailureSchema.safeParse(output) : null;
  if (failure?.success) return { ...base, audit: null, findings: [findingOfFailure(failure.data)] };
  const how = result.signal ? `was killed by ${result.signal}` : `exited with status ${result.exitCode}`;
  const said = lastLine(result.stderr) || 'no message';
  return { ...base, audit: null, findings: [{ level: 'error', check: 'audit-crashed', message: `the audit process ${how} without an audit object: ${said}` }] };
}

/**
 * Runs `python -m kforge_worker audit` on one problem file (on the CPU, seeds 11–15) and turns
 * what it prints into findings: a problem that fails to load, make its inputs or run its
 * reference is an `error`; an exactly right trivial output is an `error`; a trivial output that
 * passes the tolerance is a `warning`. The process gets a worker's allow-listed environment with
 * `HOME` and `TMPDIR` in a scratch folder removed afterwards.
 *
 * @throws EvaluatorSetupError when Python cannot be started, lacks torch or the worker package,
 *   or refuses the command line (exit status 2).
 */
export async function auditProblemFile(problemPath: string, options: ProblemAuditorOptions): Promise<ProblemAudit> {
  const refused = await tooLarge(path.resolve(problemPath), options);
  if (refused) return refused;
  const scratch = await mkdtemp(path.join(tmpdir(), 'kforge-audit-'));
  try {
    const temporaryDirectory = path.join(scratch, 'tmp');
    await mkdir(temporaryDirectory);
    const env = buildWorkerEnvironment(options.environment, { homeDirectory: scratch, temporaryDirectory, workerDirectory: options.workerDirectory });
    const limitMs = options.timeoutMs ?? DEFAULT_AUDIT_TIMEOUT_MS;
    const result = await runProcess(options.python, auditArguments(path.resolve(problemPath), options, limitMs), {
      cwd: scratch,
      env,
      timeoutMs: limitMs,
      killGraceMs: options.killGraceMs ?? 5000,
    }).catch((error: unknown) => {
      throw new EvaluatorSetupError(`cannot start ${options.python} for the problem audit: ${(error as Error).message}`, { hint: SETUP_HINT, cause: error });
    });
    if (result.exitCode === 2 && !result.timedOut) {
      throw new EvaluatorSetupError(`the worker refused the audit command: ${lastLine(result.stderr)}`, { stderr: result.stderr });
    }
    const audit = auditOf(path.resolve(problemPath), result, limitMs, options.raiseLimitHint ?? 'raise --timeout');
    const missing = MISSING_MODULE.exec(result.stderr);
    if (missing && audit.findings.some((finding) => finding.check === 'audit-crashed')) {
      throw new EvaluatorSetupError(`${options.python} cannot import ${missing[1]}`, { hint: SETUP_HINT, stderr: result.stderr });
    }
    return audit;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
