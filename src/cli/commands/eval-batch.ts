import { defaultBackendFor } from '../../backends/registry.js';
import { pipelineDevicesFor } from '../evaluator/pipeline-devices.js';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import picocolors from 'picocolors';
import type { Logger } from 'pino';
import { createCliLogger } from '../io/cli-logger.js';
import { CONTEXT_BUDGET_VARIABLE } from '../../eval/pipeline/device-memory-gate.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { describeHolders } from '../../eval/locks/describe-holders.js';
import { formatBytes } from '../../core/number-format.js';
import type { PipelineEvent } from '../../eval/pipeline-events.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { EXIT, type CliIo, type TextSink } from '../io/cli-io.js';
import { openEvaluator } from '../evaluator/open-evaluator.js';
import { collectPairs, type EvaluationPair } from '../batch/eval-batch-inputs.js';
import { checkedProblem, problemFolderReaderFor, type ShapeFlags } from '../evaluator/problem-folders.js';
import type { ProblemFolderReader } from '../../eval/problem/problem-folder-reader.js';
import { batchExitCode, formatBatchSummary, runBatch } from '../batch/eval-batch-run.js';
import { openResumeJournal, type ResumeJournal } from '../batch/eval-batch-resume.js';
import { evaluationRequestOf, parseEvalOptions, type EvalOptions } from '../flags/eval-options.js';
import type { Backend } from '../../core/verdict.js';
import { checkDeviceMemoryVariable, overrideMisuse } from '../flags/size-flags.js';
import { sizesToEvaluate } from '../sizing/problem-sizing.js';
import { overridesForProblems } from '../sizing/problem-overrides.js';
import { UsageError } from '../io/usage-error.js';
import { isGpuVisible } from '../../backends/nvidia/gpu-detection.js';

/** What a batch needs of `kforge eval`'s dependencies (tests replace them). */
export interface BatchDependencies {
  createEvaluator?: (wiring: { logger: Logger; cacheDirectory?: string }) => Evaluator;
  gpuVisible?: () => Promise<boolean>;
}

/** Whether `kforge eval`'s arguments ask for a batch (more than one candidate, pairs or a folder). */
export async function isBatch(argumentsGiven: readonly string[], cwd: string): Promise<boolean> {
  if (argumentsGiven.length !== 2) return true;
  return (
    argumentsGiven[0]!.includes(':') &&
    argumentsGiven[1]!.includes(':') &&
    (await collectPairs(argumentsGiven, { cwd }).then(
      () => true,
      () => false,
    ))
  );
}

/**
 * The pairs with each problem checked once (`checkedProblem`): a problem folder becomes its
 * reference.py, whose shapes are swept; a folder that cannot be used, or `--shape`/`--fit` that
 * does not fit a problem, is a usage error naming it.
 */
async function problemFoldersChecked(pairs: EvaluationPair[], flags: ShapeFlags, readFolder: ProblemFolderReader): Promise<EvaluationPair[]> {
  const evaluated = new Map<string, string>();
  for (const problem of new Set(pairs.map((pair) => pair.problemPath))) evaluated.set(problem, (await checkedProblem(problem, flags, readFolder)).problemPath);
  return pairs.map((pair) => ({ ...pair, problemPath: evaluated.get(pair.problemPath) ?? pair.problemPath }));
}

/** Writes a waiting evaluation's line on stderr: who holds the device, or how much room it waits for. */
export function deviceWaitWriter(stderr: TextSink, prefix: string): (event: PipelineEvent) => void {
  return (event) => {
    if (event.kind !== 'device-waiting') return;
    if (event.reason === 'lock') {
      const holder =
        event.holder.pid === null ? 'another kforge process' : `pid ${event.holder.pid}${event.holder.command ? ` (${event.holder.command})` : ''}`;
      stderr.write(`${prefix}: waiting for ${event.device}, held by ${holder}\n`);
      return;
    }
    const holders = describeHolders(event.holders);
    if (event.contextCapBytes !== undefined) {
      const contexts = event.holders.filter((holder) => holder.kind === 'context').reduce((sum, holder) => sum + holder.bytes, 0);
      stderr.write(
        `${prefix}: waiting for room for a worker's CUDA context on ${event.device}: contexts outside a lease hold ${formatBytes(contexts)} of their ${formatBytes(event.contextCapBytes)} (${CONTEXT_BUDGET_VARIABLE}), and ${formatBytes(event.freeBytes)} of ${formatBytes(event.capacityBytes)} is free; held by ${holders || 'nobody now'}\n`,
      );
      return;
    }
    stderr.write(
      `${prefix}: waiting for ${formatBytes(event.neededBytes)} of ${event.device}'s memory: ${formatBytes(event.freeBytes)} of ${formatBytes(event.capacityBytes)} free, held by ${holders || 'nobody now'}\n`,
    );
  };
}

/**
 * `kforge eval` over several candidates (docs/batch.md): one pipeline for all of them (parallel
 * builds, one device lease at a time, the host-wide memory budget), one line per candidate on
 * stdout as it finishes (a JSON object with `--json`), a summary on stderr; exit status by
 * {@link batchExitCode}.
 */
export async function runEvalBatch(argumentsGiven: readonly string[], rawOptions: unknown, io: CliIo, dependencies: BatchDependencies): Promise<number> {
  const controller = new AbortController();
  // Every candidate of the batch waits on this one signal (builds, the device, retries): 40 of them
  // made node warn of a listener leak at the eleventh.
  setMaxListeners(0, controller.signal);
  const cancel = (): void => controller.abort();
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  let journal: ResumeJournal | undefined;
  try {
    const options = parseEvalOptions(rawOptions);
    checkDeviceMemoryVariable(io.environment);
    const readFolder = problemFolderReaderFor(io);
    const pairs = await problemFoldersChecked(await collectPairs(argumentsGiven, { cwd: io.cwd, kernelBench: options.kernelbench }), options, readFolder);
    const backend = options.backend ?? defaultBackendFor(await (dependencies.gpuVisible ?? (() => isGpuVisible(io.environment)))());
    const sizes = await sizesOfProblems(pairs, backend, options, io);
    journal = await resumeJournalOf(options, io);
    const logger = createCliLogger(io, { format: options.logFormat });
    const { createEvaluator } = dependencies;
    const { evaluator, close } = await openEvaluator({
      problemFolders: readFolder,
      kind: 'local',
      wiring: { environment: io.environment, cwd: io.cwd, logger, cacheDirectory: options.cacheDir },
      pipeline: pipelineDevicesFor(backend, options.device),
      ...(createEvaluator ? { create: () => createEvaluator({ logger, cacheDirectory: options.cacheDir }) } : {}),
    });
    const colors = picocolors.createColors(io.color && process.stderr.isTTY === true);
    io.stderr.write(colors.dim(`kforge eval: ${pairs.length} candidates of ${sizes.size} problems on ${backend}\n`));
    try {
      const summary = await runBatch({
        pairs,
        requestOf: (pair) => evaluationRequestOf(pair, backend, options, sizes.get(pair.problemPath) ?? {}),
        evaluator,
        json: options.json,
        stdout: io.stdout,
        stderr: io.stderr,
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        signal: controller.signal,
        evaluateOptions: { onPipelineEvent: deviceWaitWriter(io.stderr, 'kforge eval') },
        ...(journal ? { journal } : {}),
      });
      io.stderr.write(formatBatchSummary(summary));
      const misuse = summary.results.map(overrideMisuse).find((message) => message !== null);
      if (misuse) {
        // Every candidate of that problem got the same `invalid_input`: the command's fault, not theirs.
        io.stderr.write(`kforge eval: ${misuse}\n`);
        return EXIT.usage;
      }
      return batchExitCode(summary);
    } finally {
      await close();
    }
  } catch (error) {
    return batchFailureExit(error, journal, io);
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

/** The sizes each problem of the batch is evaluated at; `--set` applies to each problem that has the constant, or to the one it names (problem-overrides.ts). */
async function sizesOfProblems(
  pairs: readonly EvaluationPair[],
  backend: Backend,
  options: EvalOptions,
  io: CliIo,
): Promise<Map<string, Record<string, number | boolean>>> {
  const sizes = new Map<string, Record<string, number | boolean>>();
  const problems = [...new Set(pairs.map((pair) => pair.problemPath))];
  const given = await overridesForProblems(problems, options.set, io, 'kforge eval');
  for (const problem of problems) {
    sizes.set(problem, await sizesToEvaluate(problem, backend, options, io, { command: 'kforge eval', overrides: given.get(problem) ?? {} }));
  }
  return sizes;
}

/** Says why the batch stopped and returns its exit status; rethrows what is not one of its known failures. */
function batchFailureExit(error: unknown, journal: ResumeJournal | undefined, io: CliIo): number {
  if (error instanceof UsageError || error instanceof ProblemTooLargeError) {
    io.stderr.write(`kforge eval: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof EvaluatorSetupError) {
    io.stderr.write(`kforge eval: ${error.message}${error.hint ? `; ${error.hint}` : ''}\n`);
    return EXIT.usage;
  }
  if (error instanceof EvaluationCancelledError) {
    io.stderr.write(
      `kforge eval: cancelled; the workers were stopped${journal ? `; the finished results are in ${journal.path}: run the same command to go on` : ''}\n`,
    );
    return EXIT.cancelled;
  }
  throw error;
}

/** With `--resume FILE`, its journal, saying how many of its lines could not be read. */
async function resumeJournalOf(options: EvalOptions, io: CliIo): Promise<ResumeJournal | undefined> {
  const journal = options.resume ? await openResumeJournal(path.resolve(io.cwd, options.resume)) : undefined;
  if (journal && journal.unreadableLines > 0)
    io.stderr.write(
      `kforge eval: ${journal.unreadableLines} line(s) of ${options.resume} could not be read (a run stopped while writing?); their candidates are evaluated again\n`,
    );
  return journal;
}
