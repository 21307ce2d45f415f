import path from 'node:path';
import { WORKER_DIRECTORY } from '../core/repository-paths.js';
import type { Backend, Precision, Preset } from '../core/verdict.js';
import { deviceCapacityBytes } from '../eval/pipeline/device-capacity.js';
import { formatBytes } from '../eval/pipeline/memory-budget.js';
import { ProblemTooLargeError } from '../eval/problem/problem-too-large-error.js';
import { estimateEvaluationSize } from '../eval/problem/size-estimate.js';
import type { CliIo } from './cli-io.js';
import { pythonExecutable } from './python-executable.js';
import { parseOverrides } from './size-flags.js';
import { UsageError } from './usage-error.js';

/** The flags that decide a problem's sizes (`kforge eval` and `kforge optimize` share them). */
export interface SizingFlags {
  /** `--set NAME=VALUE` values, unparsed. */
  set: readonly string[];
  /** `--fit`: at sizes that fit this machine when the problem's own do not. */
  fit: boolean;
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
}

/**
 * The overrides to evaluate `problemPath` with: `--set`, and with `--fit`, the estimate's sizes
 * when the problem's own do not fit this machine (said on stderr).
 *
 * @throws ProblemTooLargeError when `--fit` finds no sizes that fit; UsageError when the problem
 *   cannot be sized with `--fit`, or (with `validate`) a `--set` name is not one of its constants.
 */
export async function sizesToEvaluate(
  problemPath: string,
  backend: Backend,
  flags: SizingFlags,
  io: CliIo,
  options: SizingOptions = { command: 'kforge eval' },
): Promise<Record<string, number | boolean>> {
  const overrides = options.overrides ?? parseOverrides(flags.set);
  const checking = options.validate === true && Object.keys(overrides).length > 0;
  if (!flags.fit && !checking) return overrides;
  const device = backend === 'cpu' ? 'cpu' : `cuda:${flags.device ?? 0}`;
  const capacity = flags.fit ? await deviceCapacityBytes(device, io.environment) : null;
  const estimated = await estimateEvaluationSize({
    python: pythonExecutable(io.environment),
    workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    environment: io.environment,
    problemPath,
    preset: flags.preset,
    precision: flags.precision,
    deviceType: backend === 'cpu' ? 'cpu' : 'cuda',
    overrides,
    capacityBytes: capacity,
    timing: flags.timing,
  });
  const name = path.basename(problemPath);
  if (!estimated.ok) {
    if (flags.fit) throw new UsageError(`--fit: ${name} cannot be sized: ${estimated.message}`);
    // Without --fit only a misuse stops the run here; a problem that cannot be sized is the evaluation's to report.
    if (estimated.cause === 'input') throw new UsageError(`${name}: ${estimated.message}`);
    return overrides;
  }
  const { estimate } = estimated;
  if (!flags.fit || estimate.fits !== false || capacity === null) return overrides;
  if (!estimate.fit) throw new ProblemTooLargeError(problemPath, device, estimate, capacity);
  const set = Object.entries(estimate.fit.overrides)
    .map(([constant, value]) => `--set ${constant}=${String(value)}`)
    .join(' ');
  io.stderr.write(
    `${options.command}: ${name} needs about ${formatBytes(estimate.evaluation_bytes)} at ${Object.keys(overrides).length > 0 ? 'the sizes given' : 'its own sizes'}, more than the ${formatBytes(capacity)} of ${device}; evaluating it with ${set} (about ${formatBytes(estimate.fit.evaluation_bytes)}), recorded as problem_overrides\n`,
  );
  return { ...estimate.fit.overrides };
}
