import { backendModule, runsOnHost } from '../../backends/registry.js';
import path from 'node:path';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import type { Backend, Precision, Preset } from '../../core/verdict.js';
import { deviceCapacityBytes } from '../../eval/devices/device-capacity.js';
import { formatBytes } from '../../core/number-format.js';
import {
  evaluationSecondsAt,
  formatBudgetFlag,
  formatEvaluationTime,
  OFFERED_EVALUATION_MS,
  setFlags,
  timeFitWords,
} from '../../eval/problem/evaluation-time.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { estimateEvaluationSize, type SizeEstimate } from '../../eval/problem/size-estimate.js';
import type { CliIo } from '../io/cli-io.js';
import { pythonExecutable } from '../io/python-executable.js';
import { parseDuration, parseOverrides } from '../flags/size-flags.js';
import { UsageError } from '../io/usage-error.js';

/** The flags that decide a problem's sizes (`kforge eval` and `kforge optimize` share them). */
export interface SizingFlags {
  /** `--set NAME=VALUE` values, unparsed. */
  set: readonly string[];
  /** `--fit`: at sizes that fit this machine when the problem's own do not. */
  fit: boolean;
  /** `--eval-budget DURATION`, unparsed: at sizes whose evaluation takes about that long on this machine (cpu). */
  evalBudget?: string | undefined;
  /** `--device`: the GPU whose memory counts. */
  device?: number | undefined;
  preset?: Preset | undefined;
  precision: Precision;
  /** Whether the evaluation times (the timing stage's state counts in the estimate). */
  timing: boolean;
}

export interface SizingOptions {
  /** The command named on stderr and in errors (`kforge eval`). */
  command: string;
  /**
   * Check the `--set` names against the problem before anything runs, even without `--fit`. A
   * single evaluation leaves that to the worker (one `invalid_input`, exit 2); a search would pay a
   * model call per candidate for the same misuse.
   */
  validate?: boolean;
  /**
   * The problem's `--set` values, already resolved against the command's problems
   * (problem-overrides.ts); left out, `flags.set` is this problem's alone.
   */
  overrides?: Record<string, number | boolean>;
  /**
   * What `--eval-budget` does with a problem it cannot meet (no size within it, or no time told):
   * `refuse` (a usage error: `kforge eval`), or `warn` and keep the sizes closest to it (a suite of
   * `kforge optimize`, which one such problem should not stop).
   */
  unmetBudget?: 'refuse' | 'warn';
}

/** `--eval-budget`'s milliseconds, or undefined; a GPU backend cannot take it. */
export function evaluationBudgetMs(flags: Pick<SizingFlags, 'evalBudget'>, backend: Backend): number | undefined {
  if (flags.evalBudget === undefined) return undefined;
  const budgetMs = parseDuration(flags.evalBudget, '--eval-budget');
  if (budgetMs <= 0) throw new UsageError(`expected \`--eval-budget\` to be a positive duration such as 60s or 5m, got \`${flags.evalBudget}\``);
  if (!runsOnHost(backend)) {
    throw new UsageError(
      `\`--eval-budget\` times the reference on this host's CPU, so it sizes evaluations on the cpu backend only, not ${backend}: give the sizes with --set NAME=VALUE`,
    );
  }
  return budgetMs;
}

/**
 * The overrides to evaluate `problemPath` with: `--set`; with `--fit`, the estimate's sizes when the
 * problem's own do not fit this machine; with `--eval-budget` (cpu), the largest halving of its
 * batch whose evaluation takes about that long here and fits (said on stderr, with the time).
 *
 * @throws ProblemTooLargeError when `--fit` finds no sizes that fit; UsageError when the problem
 *   cannot be sized as asked, no size fits `--eval-budget`, or (with `validate`) a `--set` name is
 *   not one of its constants.
 */
export async function sizesToEvaluate(
  problemPath: string,
  backend: Backend,
  flags: SizingFlags,
  io: CliIo,
  options: SizingOptions = { command: 'kforge eval' },
): Promise<Record<string, number | boolean>> {
  const overrides = options.overrides ?? parseOverrides(flags.set);
  const budgetMs = evaluationBudgetMs(flags, backend);
  const checking = options.validate === true && Object.keys(overrides).length > 0;
  if (!flags.fit && budgetMs === undefined && !checking) return overrides;
  const sizing = flags.fit || budgetMs !== undefined;
  // On the cpu backend --fit times the problem too, to say how long its sizes take.
  const timeBudgetMs = runsOnHost(backend) && sizing ? (budgetMs ?? OFFERED_EVALUATION_MS) : undefined;
  let estimated = await estimateFor(problemPath, backend, flags, io, overrides, { capacity: sizing, timeBudgetMs });
  if (!estimated.ok && estimated.cause === 'command' && timeBudgetMs !== undefined && budgetMs === undefined) {
    // The time is --fit's advice only: a probe that did not finish leaves the sizing by memory.
    estimated = await estimateFor(problemPath, backend, flags, io, overrides, { capacity: sizing, timeBudgetMs: undefined });
  }
  const name = path.basename(problemPath);
  if (!estimated.ok) {
    const flag = budgetMs !== undefined ? '--eval-budget' : '--fit';
    if (sizing) throw new UsageError(`${flag}: ${name} cannot be sized: ${estimated.message}`);
    // Without --fit only a misuse stops the run here; a problem that cannot be sized is the evaluation's to report.
    if (estimated.cause === 'input') throw new UsageError(`${name}: ${estimated.message}`);
    return overrides;
  }
  const { estimate, capacity } = estimated;
  if (budgetMs !== undefined) return sizedByTime(name, estimate, budgetMs, overrides, io, options);
  if (!flags.fit || capacity === null) return overrides;
  const asked = Object.keys(overrides).length > 0 ? 'the sizes given' : 'its own sizes';
  if (estimate.fits !== false) {
    const seconds = evaluationSecondsAt(estimate);
    const byTime = timeFitWords(estimate);
    if (seconds !== null && seconds * 1000 > OFFERED_EVALUATION_MS && byTime) {
      io.stderr.write(
        `${options.command}: ${name} fits this machine at ${asked}, where an evaluation takes ${formatEvaluationTime(seconds)} here; ${byTime} (--eval-budget ${formatBudgetFlag(OFFERED_EVALUATION_MS)} evaluates it so)\n`,
      );
    }
    return overrides;
  }
  if (!estimate.fit) throw new ProblemTooLargeError(problemPath, backendModule(backend).detect.deviceName(flags.device), estimate, capacity);
  const seconds = evaluationSecondsAt(estimate, estimate.fit.overrides);
  const byTime = timeFitWords(estimate);
  const time = seconds === null ? '' : `; ${formatEvaluationTime(seconds)} per evaluation on this machine`;
  const offer =
    seconds !== null && seconds * 1000 > OFFERED_EVALUATION_MS && byTime
      ? ` (${byTime}: --eval-budget ${formatBudgetFlag(OFFERED_EVALUATION_MS)} evaluates it so)`
      : '';
  const device = backendModule(backend).detect.deviceName(flags.device);
  io.stderr.write(
    `${options.command}: ${name} needs about ${formatBytes(estimate.evaluation_bytes)} at ${asked}, more than the ${formatBytes(capacity)} of ${device}; evaluating it with ${setFlags(estimate.fit.overrides)} (about ${formatBytes(estimate.fit.evaluation_bytes)}${time}), recorded as problem_overrides${offer}\n`,
  );
  return { ...estimate.fit.overrides };
}

/** `--eval-budget`: the estimate's size for that time, said on stderr; one it cannot meet is refused or warned of. */
function sizedByTime(
  name: string,
  estimate: SizeEstimate,
  budgetMs: number,
  overrides: Record<string, number | boolean>,
  io: CliIo,
  options: SizingOptions,
): Record<string, number | boolean> {
  const { command } = options;
  const time = estimate.time;
  const budget = `--eval-budget ${formatBudgetFlag(budgetMs)}`;
  const unmet = (sentence: string, kept: Record<string, number | boolean>, keptWords: string): Record<string, number | boolean> => {
    if (options.unmetBudget !== 'warn') throw new UsageError(`${budget}: ${sentence}`);
    io.stderr.write(`${command}: ${budget}: ${sentence}; ${keptWords}\n`);
    return kept;
  };
  if (!time || time.error !== null || time.evaluation_s === null) {
    return unmet(`${name} cannot be timed on this machine: ${time?.error ?? 'the estimate did not time it'}`, overrides, 'evaluating it at the sizes given');
  }
  const asked = Object.keys(overrides).length > 0 ? 'the sizes given' : 'its own sizes';
  if (time.evaluation_s * 1000 <= budgetMs && estimate.fits !== false) {
    io.stderr.write(`${command}: ${name} takes ${formatEvaluationTime(time.evaluation_s)} per evaluation at ${asked} on this machine, within ${budget}\n`);
    return overrides;
  }
  const fit = time.fit;
  if (!fit) {
    const smallest = time.sizes?.at(-1);
    const least = smallest && time.constant ? ` even at --set ${time.constant}=${smallest.value}` : ` at ${asked} (it has no size constant to make smaller)`;
    const sentence = `no size of ${name} fits it on this machine: an evaluation takes ${formatEvaluationTime(smallest?.evaluation_s ?? time.evaluation_s)}${least}; give a longer budget, or the sizes with --set NAME=VALUE`;
    if (!smallest || !time.constant || estimate.fits === false) return unmet(sentence, overrides, `evaluating it at ${asked}`);
    return unmet(sentence, { ...overrides, [time.constant]: smallest.value }, `evaluating it at --set ${time.constant}=${smallest.value}, the closest`);
  }
  io.stderr.write(
    `${command}: ${name} takes ${formatEvaluationTime(time.evaluation_s)} per evaluation at ${asked} on this machine; evaluating it with ${setFlags(fit.overrides)} (${formatEvaluationTime(fit.evaluation_s)}, within ${budget}), recorded as problem_overrides\n`,
  );
  return { ...fit.overrides };
}

/** The estimate at `overrides`, with this machine's capacity and the time when asked. */
async function estimateFor(
  problemPath: string,
  backend: Backend,
  flags: SizingFlags,
  io: CliIo,
  overrides: Record<string, number | boolean>,
  asked: { capacity: boolean; timeBudgetMs: number | undefined },
): Promise<{ ok: true; estimate: SizeEstimate; capacity: number | null } | { ok: false; message: string; cause: 'problem' | 'input' | 'command' }> {
  const device = backendModule(backend).detect.deviceName(flags.device);
  const capacity = asked.capacity ? await deviceCapacityBytes(device, io.environment) : null;
  const estimated = await estimateEvaluationSize({
    python: pythonExecutable(io.environment),
    workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    environment: io.environment,
    problemPath,
    preset: flags.preset,
    precision: flags.precision,
    deviceType: backendModule(backend).detect.torchDevice,
    overrides,
    capacityBytes: capacity,
    timing: flags.timing,
    ...(asked.timeBudgetMs !== undefined ? { time: { budgetMs: asked.timeBudgetMs } } : {}),
  });
  return estimated.ok ? { ...estimated, capacity } : estimated;
}

/**
 * A too-large refusal met while evaluating (the device's memory gate, without `--fit`), said again
 * with how long an evaluation takes at the sizes that fit and a size that takes about a minute, on
 * the cpu backend where the estimate can time it; the refusal as it was otherwise.
 */
export async function tooLargeWithTime(
  error: ProblemTooLargeError,
  problemPath: string,
  backend: Backend,
  flags: SizingFlags,
  io: CliIo,
): Promise<ProblemTooLargeError> {
  if (!runsOnHost(backend) || error.estimate.time) return error;
  const estimated = await estimateFor(problemPath, backend, flags, io, parseOverrides(flags.set), {
    capacity: true,
    timeBudgetMs: OFFERED_EVALUATION_MS,
  }).catch(() => null);
  if (!estimated?.ok || !estimated.estimate.time) return error;
  return new ProblemTooLargeError(problemPath, backendModule(backend).detect.deviceName(), estimated.estimate, estimated.capacity ?? error.capacityBytes);
}
