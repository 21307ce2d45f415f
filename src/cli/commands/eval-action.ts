import { backendModule, defaultBackendFor } from '../../backends/registry.js';
import { pipelineDevicesFor } from '../evaluator/pipeline-devices.js';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import picocolors from 'picocolors';
import type { Logger } from 'pino';
import { evaluationResultSchema, type Backend, type EvaluationResult } from '../../core/verdict.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, EvaluationRequest, Evaluator, ShapeStartedEvent } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { isGpuVisible } from '../../backends/nvidia/gpu-detection.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { ON_DEMAND_SIZING } from '../evaluator/create-worker-evaluator.js';
import { openEvaluator } from '../evaluator/open-evaluator.js';
import { evaluationRequestOf, parseEvalOptions, type EvalOptions } from '../flags/eval-options.js';
import { renderEvaluation } from '../rendering/render-evaluation.js';
import { stageProgressWriter } from '../rendering/stage-progress.js';
import { UsageError } from '../io/usage-error.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import type { PipelineEvent } from '../../eval/pipeline-events.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { checkDeviceMemoryVariable, overrideMisuse } from '../flags/size-flags.js';
import { deviceWaitWriter, isBatch, runEvalBatch } from './eval-batch.js';
import { sizesToEvaluate, tooLargeWithTime } from '../sizing/problem-sizing.js';
import { overridesForProblems } from '../sizing/problem-overrides.js';
import { assertBackendRunsHere } from '../doctor/gpu-backend-check.js';
import { createCliLogger } from '../io/cli-logger.js';
import { checkedProblem, problemFolderReaderFor } from '../evaluator/problem-folders.js';
import { REFERENCE_FILE } from '../../eval/problem/problem-folder.js';

/** What `kforge eval` needs beyond its io; tests replace any of it. */
export interface EvalCommandDependencies extends Partial<CliIo> {
  /**
   * Default: a local PipelinedEvaluator configured from the environment (build cache, device
   * leases) for one candidate. The command closes it (`close`, when it has one) before it ends.
   */
  createEvaluator?: (wiring: { logger: Logger; cacheDirectory?: string }) => Evaluator;
  /** Default: nvidia-smi lists a GPU. */
  gpuVisible?: () => Promise<boolean>;
}

/**
 * What `kforge eval` does once its arguments are parsed (its registration is eval.ts, which loads
 * this module only then): one candidate, or a batch (docs/batch.md); sets the exit status.
 */
export async function evalAction(problem: string, candidates: string[], rawOptions: unknown, dependencies: EvalCommandDependencies): Promise<void> {
  const io = resolveCliIo(dependencies);
  // `--resume` keeps results in a file as a batch does: a single candidate with it is a batch of one.
  const resuming = typeof (rawOptions as { resume?: unknown } | null)?.resume === 'string';
  if (candidates.length === 1 && !resuming && !(await isBatch([problem, ...candidates], io.cwd))) {
    io.setExitCode(await runEval(problem, candidates[0]!, rawOptions, io, dependencies));
  } else {
    io.setExitCode(await runEvalBatch([problem, ...candidates], rawOptions, io, dependencies));
  }
}

/** What a too-large refusal is said again with, timed (problem-sizing.ts). */
type SizedEvaluation = { problemPath: string; backend: Backend; options: EvalOptions };

async function runEval(problem: string, candidate: string, rawOptions: unknown, io: CliIo, dependencies: EvalCommandDependencies): Promise<number> {
  const colors = picocolors.createColors(io.color);
  const errorColors = picocolors.createColors(io.color && process.stderr.isTTY === true);
  let result: EvaluationResult;
  let sized: SizedEvaluation | undefined;
  try {
    const options = parseEvalOptions(rawOptions);
    checkDeviceMemoryVariable(io.environment);
    const problemGiven = await readableFile(problem, 'problem', io.cwd);
    const candidatePath = await readableFile(candidate, 'candidate', io.cwd);
    const readFolder = problemFolderReaderFor(io);
    const { problemPath } = await checkedProblem(problemGiven, options, readFolder);
    const backend = options.backend ?? (await defaultBackend(io, dependencies));
    if (options.backend && backendModule(options.backend).detect.needs !== null) assertBackendRunsHere(backend, await gpuVisible(io, dependencies), 'eval');
    const given = await overridesForProblems([problemPath], options.set, io, 'kforge eval');
    const overrides = await sizesToEvaluate(problemPath, backend, options, io, { command: 'kforge eval', overrides: given.get(problemPath) ?? {} });
    sized = { problemPath, backend, options };
    const logger = createCliLogger(io, { format: options.logFormat });
    const { createEvaluator } = dependencies;
    const { evaluator, close } = await openEvaluator({
      problemFolders: readFolder,
      kind: 'local',
      wiring: { environment: io.environment, cwd: io.cwd, logger, cacheDirectory: options.cacheDir },
      // The pipeline's only device is the one asked for (`--device`).
      pipeline: { sizing: ON_DEMAND_SIZING, ...pipelineDevicesFor(backend, options.device) },
      ...(createEvaluator ? { create: () => createEvaluator({ logger, cacheDirectory: options.cacheDir }) } : {}),
    });
    try {
      result = await evaluateWithInterrupts(
        evaluator,
        evaluationRequestOf({ problemPath, candidatePath }, backend, options, overrides),
        stageProgressWriter(io.stderr, errorColors),
        deviceWaitWriter(io.stderr, 'kforge eval'),
        (shape) => io.stderr.write(errorColors.bold(`kforge eval: ${shape.label}, ${shape.position} of ${shape.total}\n`)),
      );
    } finally {
      await close();
    }
    const valid = evaluationResultSchema.safeParse(result);
    if (!valid.success) {
      throw new Error(`the evaluation result does not match src/core/verdict.ts: ${valid.error.issues[0]?.path.join('.')}: ${valid.error.issues[0]?.message}`);
    }
    const misuse = overrideMisuse(result);
    if (misuse) throw new UsageError(misuse);
    io.stdout.write(options.json ? `${JSON.stringify(result)}\n` : renderEvaluation(result, colors));
  } catch (error) {
    return evalFailureExit(error, sized, io);
  }
  return result.verdict === 'correct' ? EXIT.correct : EXIT.notCorrect;
}

/** Says why `kforge eval` gave no verdict and returns its exit status; rethrows what is not one of its known failures. */
async function evalFailureExit(error: unknown, sized: SizedEvaluation | undefined, io: CliIo): Promise<number> {
  if (error instanceof UsageError) {
    io.stderr.write(`kforge eval: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof EvaluatorSetupError || error instanceof MachineFaultError) {
    io.stderr.write(`kforge eval: ${error.message}${error.hint ? `; ${error.hint}` : ''}\n`);
    return EXIT.usage;
  }
  if (error instanceof ProblemTooLargeError) {
    // On the cpu backend, said with how long an evaluation takes at the sizes that fit.
    const said = sized ? await tooLargeWithTime(error, sized.problemPath, sized.backend, sized.options, io) : error;
    io.stderr.write(`kforge eval: ${said.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof WorkerFaultError) {
    io.stderr.write(`kforge eval: ${error.message}\n${error.stderr ? `${error.stderr.trimEnd()}\n` : ''}`);
    return EXIT.internal;
  }
  if (error instanceof EvaluationCancelledError) {
    io.stderr.write('kforge eval: cancelled; the workers were stopped\n');
    return EXIT.cancelled;
  }
  throw error;
}

/**
 * Runs the evaluation; Ctrl-C or SIGTERM cancels it and kills the workers instead of orphaning
 * them. A second Ctrl-C while they are being stopped is absorbed, so clean-up always finishes.
 */
async function evaluateWithInterrupts(
  evaluator: Evaluator,
  evaluationRequest: EvaluationRequest,
  onProgress: ReturnType<typeof stageProgressWriter>,
  onPipelineEvent: (event: PipelineEvent) => void,
  onShape: (event: ShapeStartedEvent) => void,
): Promise<EvaluationResult> {
  const controller = new AbortController();
  const cancel = (): void => controller.abort();
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  try {
    const evaluateOptions: EvaluateOptions = { signal: controller.signal, onProgress, onPipelineEvent, onShape };
    return (await evaluator.evaluate(evaluationRequest, evaluateOptions)).result;
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

/**
 * The absolute path of a readable file (or, for the problem, of a problem folder holding
 * reference.py), or a {@link UsageError} saying what is wrong with it.
 */
async function readableFile(given: string, what: 'problem' | 'candidate', cwd: string): Promise<string> {
  const absolute = path.resolve(cwd, given);
  const expected =
    what === 'problem' ? 'a KernelBench-style problem file or a problem folder (reference.py with shapes.py)' : 'a candidate file that defines ModelNew';
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) {
      const holdsReference =
        what === 'problem' &&
        (await stat(path.join(absolute, REFERENCE_FILE)).then(
          (file) => file.isFile(),
          () => false,
        ));
      if (!holdsReference)
        throw new UsageError(`the ${what} \`${given}\` is a directory${what === 'problem' ? ` without ${REFERENCE_FILE}` : ''}; pass ${expected}`);
      return absolute;
    }
    await access(absolute, constants.R_OK);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`the ${what} file \`${given}\` does not exist; pass the path of ${expected}`);
    throw new UsageError(`the ${what} file \`${given}\` cannot be read (${code}); check its permissions`);
  }
  return absolute;
}

function gpuVisible(io: CliIo, dependencies: EvalCommandDependencies): Promise<boolean> {
  return (dependencies.gpuVisible ?? (() => isGpuVisible(io.environment)))();
}

async function defaultBackend(io: CliIo, dependencies: EvalCommandDependencies): Promise<Backend> {
  const visible = await gpuVisible(io, dependencies);
  if (!visible) io.stderr.write('kforge eval: no GPU is visible, so the backend is cpu (pass --backend to choose)\n');
  return defaultBackendFor(visible);
}
