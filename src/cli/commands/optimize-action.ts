import { defaultBackendFor, runsOnHost } from '../../backends/registry.js';
import path from 'node:path';
import type { Logger } from 'pino';
import { buildOptimizePlan } from '../../agent/run/optimize-plan-builder.js';
import type { OptimizePlan } from '../../agent/run/optimize-plan.js';
import { OptimizeRequestError } from '../../agent/run/optimize-request-error.js';
import { OptimizeRunError } from '../../agent/run/optimize-run-error.js';
import { loadRunPlan, resumeOptimizeRun, startOptimizeRun, type OptimizeDependencies } from '../../agent/run/optimize-run.js';
import { outputWidth } from '../io/output-width.js';
import { formatReportTable } from '../../agent/report/report-table.js';
import { describeNamedDevice } from '../../agent/search/prompts/target-device.js';
import { toJsonOutput, type RunReport } from '../../agent/report/run-report.js';
import { SuiteError } from '../../agent/run/suite-error.js';
import { ConfigError, loadConfig, type KforgeConfig, type LoadedConfig, type ModelSettings } from '../../core/config.js';
import type { Backend } from '../../core/verdict.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { CandidateUnevaluatedError } from '../../agent/run/candidate-unevaluated-error.js';
import { detectGpus, type DetectedGpu } from '../../backends/nvidia/gpu-detection.js';
import type { KernelModel } from '../../llm/kernel-model.js';
import { ModelConfigurationError } from '../../llm/model-configuration-error.js';
import { openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/sqlite/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { connectedWorkersBackend } from '../evaluator/connected-workers-backend.js';
import type { OpenedEvaluator } from '../evaluator/open-evaluator.js';
import { openRunEvaluator } from './optimize-evaluator.js';
import { progressOutput } from './optimize-progress-output.js';
import { problemFolderNotes, problemFolderReaderFor } from '../evaluator/problem-folders.js';
import type { RemoteEvaluation, RemoteEvaluationOptions } from '../evaluator/remote-evaluation.js';
import { RedisUnreachableError } from '../../queue/redis/redis-unreachable-error.js';
import { UsageError } from '../io/usage-error.js';
import { assertBackendRunsHere } from '../doctor/gpu-backend-check.js';
import { createCliLogger } from '../io/cli-logger.js';
import { runOptimizeDryRun, type DryRunOptions } from '../sizing/optimize-dry-run.js';
import { resolveSuite } from '../flags/suite-options.js';
import { pythonExecutable } from '../io/python-executable.js';
import { auditProblemFile } from '../../eval/problem/problem-auditor.js';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { createRunModel, routeProblemEvents } from './run-model.js';
import { sizesToEvaluate } from '../sizing/problem-sizing.js';
import { overridesForProblems } from '../sizing/problem-overrides.js';
import { nextSteps } from '../rendering/optimize-next-steps.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { parseOptimizeFlags, requestFromFlags, type OptimizeFlags } from './optimize-flags.js';

/** What `kforge optimize` needs beyond its io; tests replace any of it. */
export interface OptimizeCommandDependencies extends Partial<CliIo> {
  /**
   * Default: a local PipelinedEvaluator configured from the environment (build cache, device
   * leases), as `kforge eval` uses it. The command closes it (`close`, when it has one) when it ends.
   */
  createEvaluator?: (wiring: { logger: Logger; backend: Backend }) => Evaluator | Promise<Evaluator>;
  /** Default: `createRunModel` (`createKernelModel`; for `files`, one subfolder of `--dir` per problem, resumed past the replies taken). */
  createModel?: (settings: ModelSettings) => Promise<KernelModel>;
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  /** With `--redis`: the queue's evaluator. Default: `openRemoteEvaluation`. */
  openRemoteEvaluation?: (options: RemoteEvaluationOptions) => Promise<RemoteEvaluation>;
  /**
   * With `--redis` and no backend asked for: the backend the connected workers serve (cuda when a
   * GPU worker is connected, else cpu when a cpu worker is), or null when none is. Default: {@link connectedWorkersBackend}.
   */
  remoteBackend?: (options: { url: string; queueName?: string | undefined }) => Promise<Backend | null>;
  loadConfig?: (configPath: string | undefined, options: { cwd: string }) => Promise<LoadedConfig>;
  /** The GPUs the host has (for the default backend and the target's name). Default: nvidia-smi. */
  detectGpus?: () => Promise<DetectedGpu[]>;
  /** Whether stderr is a terminal (live view) or not (one line per event). Default: `process.stderr.isTTY`. */
  stderrIsTerminal?: boolean;
  /** Where SIGINT and SIGTERM are listened for. Default `process`. */
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Ends the process at once on a second Ctrl-C. Default `process.exit`. */
  exit?: (code: number) => void;
  /** `--dry-run`'s audit of one problem. Default: `auditProblemFile` (the worker's audit command). */
  auditProblem?: DryRunOptions['auditProblem'];
}

function modelSettings(plan: { model: Omit<ModelSettings, 'apiKey'> }, config: KforgeConfig): ModelSettings {
  const apiKey = config.apiKey && config.provider === plan.model.provider ? { apiKey: config.apiKey } : {};
  return { ...plan.model, ...apiKey } as ModelSettings;
}

/** With `--redis`: the backend of the connected workers, said on stderr; null when no worker is connected. */
async function remoteDefaultBackend(io: CliIo, flags: OptimizeFlags, dependencies: OptimizeCommandDependencies): Promise<Backend | null> {
  if (!flags.redis) return null;
  const backend = await (dependencies.remoteBackend ?? connectedWorkersBackend)({ url: flags.redis, queueName: flags.queue });
  if (backend) io.stderr.write(`kforge optimize: the backend is ${backend}, as the workers connected to the queue serve it (pass --backend to choose)\n`);
  return backend;
}

/** Whether CUDA programs here see a GPU: nvidia-smi lists one and CUDA_VISIBLE_DEVICES hides none. */
function gpusVisible(io: CliIo, gpus: DetectedGpu[]): boolean {
  return gpus.length > 0 && !['', '-1'].includes(io.environment.CUDA_VISIBLE_DEVICES?.trim() ?? 'unset');
}

/** The backend when none is asked for: cuda when a GPU is visible, else cpu (as `kforge eval` decides). */
async function defaultBackend(io: CliIo, gpus: DetectedGpu[]): Promise<Backend> {
  if (gpusVisible(io, gpus)) return defaultBackendFor(true);
  io.stderr.write('kforge optimize: no GPU is visible, so the backend is cpu (pass --backend to choose)\n');
  return defaultBackendFor(false);
}

/**
 * What `kforge optimize` does once its arguments are parsed (its registration is optimize.ts,
 * which loads this module only then): runs, resumes or dry-runs, and sets the exit status (0 when
 * the run finished or paused, 130 when it was stopped, 2 for misuse, 3 for a failed run).
 */
export async function optimizeAction(problemArguments: string[], rawOptions: unknown, dependencies: OptimizeCommandDependencies): Promise<void> {
  const io = resolveCliIo(dependencies);
  try {
    io.setExitCode(await run(io, problemArguments, rawOptions, dependencies));
  } catch (error) {
    io.setExitCode(reportFailure(error, io));
  }
}

/** A run of `kforge optimize`, new or resumed (or `--dry-run`'s plan); its exit status. */
async function run(io: CliIo, problemArguments: string[], rawOptions: unknown, dependencies: OptimizeCommandDependencies): Promise<number> {
  const flags = parseOptimizeFlags(rawOptions, problemArguments);
  const { config } = await (dependencies.loadConfig ?? loadConfig)(flags.config, { cwd: io.cwd });
  const storePath = resolveStorePath({ path: flags.store ?? config.store?.path, cwd: io.cwd });
  if (flags.dryRun) return dryRun(io, flags, problemArguments, config, storePath, dependencies);
  const store = await (dependencies.openStore ?? openRunStore)({ path: storePath, cwd: io.cwd });
  const controller = new AbortController();
  const signals = dependencies.signals ?? process;
  const progress = progressOutput(io, dependencies.stderrIsTerminal ?? process.stderr.isTTY === true);
  const onSignal = (): void => {
    if (controller.signal.aborted) return void (dependencies.exit ?? process.exit)(EXIT.cancelled);
    progress.notice('kforge optimize: stopping; unfinished work stays in the store for --resume (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  signals.on('SIGINT', onSignal);
  signals.on('SIGTERM', onSignal);
  let opened: OpenedEvaluator | undefined;
  try {
    const gpus = await (dependencies.detectGpus ?? detectGpus)();
    const plan = flags.resume
      ? (await loadRunPlan(store, flags.resume)).plan
      : await newRunPlan(io, flags, problemArguments, config, storePath, await chosenBackend(io, flags, config, gpus, dependencies));
    const { backend, deviceIndex } = plan.evaluation;
    if (!flags.redis) assertBackendRunsHere(backend, gpusVisible(io, gpus), 'optimize');
    const gpuName = gpus[deviceIndex ?? 0]?.name;
    const logger = createCliLogger(io, { format: flags.logFormat, write: progress.notice });
    const model = await createRunModel({
      plan,
      settings: modelSettings(plan, config),
      store,
      ...(flags.resume ? { resumeRunId: flags.resume } : {}),
      ...(dependencies.createModel ? { createModel: dependencies.createModel } : {}),
    });
    if (!flags.redis && (flags.queue !== undefined || flags.remoteSlots !== undefined))
      throw new UsageError('`--queue` and `--remote-slots` go with `--redis URL`');
    opened = await openRunEvaluator({ io, flags, backend, deviceIndex, logger, dependencies });
    // The workers start now, importing PyTorch while the run starts and the model writes its first
    // reply; started by the first candidate instead, they kept it waiting 3–7 s on a 2-core machine.
    opened.warmUp?.(backend);
    const dependenciesOfRun: OptimizeDependencies = {
      store,
      model,
      evaluator: opened.evaluator,
      ...(!runsOnHost(backend) && gpuName ? { target: describeNamedDevice(gpuName, backend) } : {}),
      onEvent: routeProblemEvents(model, progress.onEvent),
      signal: controller.signal,
    };
    const report = flags.resume ? await resumeOptimizeRun(flags.resume, dependenciesOfRun) : await startOptimizeRun(plan, dependenciesOfRun);
    progress.stop();
    writeReport(report, flags.json, io, storePath);
    return report.status === 'stopped' ? EXIT.cancelled : 0;
  } finally {
    progress.stop();
    signals.off('SIGINT', onSignal);
    signals.off('SIGTERM', onSignal);
    await opened?.close({ cancel: controller.signal.aborted });
    await store.close();
  }
}

/** `--dry-run`: the plan a new run would make, its problems audited; no store, no model, no evaluator. */
async function dryRun(
  io: CliIo,
  flags: OptimizeFlags,
  problemArguments: string[],
  config: KforgeConfig,
  storePath: string,
  dependencies: OptimizeCommandDependencies,
): Promise<number> {
  const gpus = await (dependencies.detectGpus ?? detectGpus)();
  const backend = await chosenBackend(io, flags, config, gpus, dependencies);
  const plan = await newRunPlan(io, flags, problemArguments, config, storePath, backend);
  return runOptimizeDryRun(io, plan, {
    auditProblem: dependencies.auditProblem ?? auditProblemFile,
    auditor: {
      python: pythonExecutable(io.environment),
      workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
      environment: io.environment,
    },
    json: flags.json,
  });
}

/**
 * A new run's plan: its problems, each at the sizes `--set` and `--fit` give it (checked against the
 * problem before anything runs: a constant it lacks, or a problem that cannot fit, is a usage error).
 */
async function newRunPlan(
  io: CliIo,
  flags: OptimizeFlags,
  problemArguments: string[],
  config: KforgeConfig,
  storePath: string,
  backend: Backend,
): Promise<OptimizePlan> {
  if ((flags.fit || flags.evalBudget !== undefined) && flags.redis)
    throw new UsageError(
      `\`${flags.fit ? '--fit' : '--eval-budget'}\` sizes each problem for this machine's device, but with \`--redis\` the workers' devices evaluate: give the sizes with \`--set NAME=VALUE\``,
    );
  const built = buildOptimizePlan(requestFromFlags({ ...flags, backend }, await resolveSuite(problemArguments, flags, io.cwd), io.cwd, storePath), config);
  const plan = { ...built, problemFolders: await problemFolderNotes(built.problems, flags.fit, problemFolderReaderFor(io)) };
  if (flags.set.length === 0 && !flags.fit && flags.evalBudget === undefined) return plan;
  // Sized with the plan's own settings (its precision, preset and device, defaults filled in).
  const { evaluation } = plan;
  const sizing = {
    set: flags.set,
    fit: flags.fit,
    evalBudget: flags.evalBudget,
    device: evaluation.deviceIndex,
    preset: evaluation.preset,
    precision: evaluation.precision,
    timing: true,
  };
  const problemOverrides: OptimizePlan['problemOverrides'] = {};
  // `--set` applies to each problem that has the constant, or to the one it names (problem-overrides.ts).
  const given = await overridesForProblems(plan.problems, flags.set, io, 'kforge optimize');
  for (const problem of plan.problems) {
    const overrides = await sizesToEvaluate(problem, backend, sizing, io, {
      command: 'kforge optimize',
      validate: true,
      overrides: given.get(problem) ?? {},
      unmetBudget: 'warn',
    });
    if (Object.keys(overrides).length > 0) problemOverrides[problem] = overrides;
  }
  return { ...plan, problemOverrides };
}

/** The backend of a new run: the flag, the config, the connected workers' (--redis), else by the visible GPUs. */
async function chosenBackend(
  io: CliIo,
  flags: OptimizeFlags,
  config: KforgeConfig,
  gpus: DetectedGpu[],
  dependencies: OptimizeCommandDependencies,
): Promise<Backend> {
  return flags.backend ?? config.evaluator?.backend ?? (await remoteDefaultBackend(io, flags, dependencies)) ?? (await defaultBackend(io, gpus));
}

/** Prints a failure in one line and returns the exit status; kforge's own bugs are rethrown. */
function reportFailure(error: unknown, io: CliIo): number {
  const setup =
    error instanceof OptimizeRunError && error.cause instanceof EvaluatorSetupError ? error.cause : error instanceof EvaluatorSetupError ? error : null;
  if (setup) {
    io.stderr.write(`kforge optimize: ${setup.message}${setup.hint ? `; ${setup.hint}` : ''}\n`);
    return EXIT.usage;
  }
  if (error instanceof OptimizeRunError && error.cause instanceof CandidateUnevaluatedError) {
    // The machine, not a candidate: no verdict was recorded, and a resume evaluates the candidate again.
    io.stderr.write(`kforge optimize: ${error.cause.message}\nwhen the machine has room again, continue with: kforge optimize --resume ${error.runId}\n`);
    return EXIT.usage;
  }
  const usage = [UsageError, OptimizeRequestError, SuiteError, ConfigError, ModelConfigurationError, RedisUnreachableError, ProblemTooLargeError].some(
    (kind) => error instanceof kind,
  );
  if (!usage && !(error instanceof OptimizeRunError)) throw error;
  io.stderr.write(`kforge optimize: ${(error as Error).message}\n`);
  if (error instanceof OptimizeRunError) io.stderr.write(`fix the cause, then continue with: kforge optimize --resume ${error.runId}\n`);
  return usage ? EXIT.usage : EXIT.internal;
}

function writeReport(report: RunReport, json: boolean, io: CliIo, storePath: string): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(toJsonOutput(report))}\n`);
    return;
  }
  io.stdout.write(`${formatReportTable(report, { widthColumns: outputWidth(io.stdout, io.environment) })}\n`);
  io.stderr.write(nextSteps(report, { storePath, cwd: io.cwd, widthColumns: outputWidth(io.stderr, io.environment) }));
}
