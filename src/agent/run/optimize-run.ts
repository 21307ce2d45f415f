import { runsOnHost } from '../../backends/registry.js';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Evaluator } from '../../eval/evaluator.js';
import { META_FILE, problemFolderOf, problemStem, REFERENCE_FILE, SHAPES_FILE } from '../../eval/problem/problem-folder.js';
import type { KernelModel } from '../../llm/kernel-model.js';
import { sha256Hex } from '../../store/content-hash.js';
import type { JsonObject, ProblemRecord, Run, RunStore } from '../../store/run-store.js';
import { BudgetTracker, type BudgetUsage } from '../search/state/budget.js';
import { bestAttempt } from '../search/selection/candidate-ranking.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { OptimizeRequestError } from './optimize-request-error.js';
import { OptimizeRunError } from './optimize-run-error.js';
import { optimizePlanSchema, type OptimizePlan, type OptimizePlanInput } from './optimize-plan.js';
import { writeBestKernel } from './output-writer.js';
import { searchProblem, type ProblemEntry, type ProblemSearchContext } from './problem-search.js';
import { loadProblemState, type LoadProblemStateOptions, type ProblemState } from './problem-state-loader.js';
import { candidateFilePath } from './candidate-evaluator.js';
import { buildRunReport, countCandidates, type ProblemReport, type RunOutcomeStatus, type RunReport } from '../report/run-report.js';
import type { SearchEventListener } from '../search/state/search-events.js';
import { SearchStoppedError } from '../search/state/search-stopped-error.js';
import { RunActionWatcher } from './run-action-watcher.js';
import { RunInterventions } from './run-interventions.js';
import { describeHostCpu, describeNamedDevice, type TargetDevice } from '../search/prompts/target-device.js';

/**
 * What an optimize run is wired to. The `evaluator` judges every candidate of the run, people's
 * edits included; strategies ask it for several at once, and it shares the devices among them.
 */
export interface OptimizeDependencies {
  store: RunStore;
  model: KernelModel;
  evaluator: Evaluator;
  /** The target before the first evaluation reports it. Default: the host CPU, or a generic GPU. */
  target?: TargetDevice;
  onEvent?: SearchEventListener;
  /** Aborting it stops the run gracefully (status `stopped`, resumable). */
  signal?: AbortSignal;
  now?: () => number;
  /** How often the run reads people's actions (stop, hints, edits) from the store, in ms. Default 1000. */
  actionPollMs?: number;
}

/** The file a problem came from in this run (the store keeps only the first path its content was seen at). */
function givenPath(record: ProblemRecord, plan: OptimizePlan): string | null {
  return plan.problemPaths[record.hash] ?? record.path;
}

/**
 * The file the evaluator reads: the original while it still holds the stored source, else a
 * snapshot; a problem folder's snapshot is a folder with the stored reference.py and the folder's
 * shapes.py and problem.yaml as they are now, so that its shapes are still swept.
 */
async function problemFile(record: ProblemRecord, given: string | null, candidatesDir: string, stem: string): Promise<string> {
  if (given) {
    const current = await readFile(given, 'utf8').catch(() => null);
    if (current !== null && sha256Hex(current) === record.hash) return path.resolve(given);
  }
  const folder = given ? await problemFolderOf(given) : null;
  const snapshot = folder
    ? path.resolve(candidatesDir, 'problems', `${stem}-${record.hash.slice(0, 8)}`, REFERENCE_FILE)
    : path.resolve(candidatesDir, 'problems', `${stem}-${record.hash.slice(0, 8)}.py`);
  await mkdir(path.dirname(snapshot), { recursive: true });
  await writeFile(snapshot, record.source, 'utf8');
  for (const name of folder ? [SHAPES_FILE, META_FILE] : []) {
    await copyFile(path.join(folder!, name), path.join(path.dirname(snapshot), name)).catch(() => undefined);
  }
  return snapshot;
}

async function problemEntries(records: readonly ProblemRecord[], plan: OptimizePlan): Promise<ProblemEntry[]> {
  const given = records.map((record) => givenPath(record, plan));
  const stems = await Promise.all(records.map((record, index) => (given[index] ? problemStem(given[index]) : record.name)));
  return Promise.all(
    records.map(async (record, index) => {
      const shared = stems.filter((stem) => stem === stems[index]).length > 1;
      const stem = shared ? `${stems[index]}-${record.hash.slice(0, 8)}` : stems[index]!;
      const file = await problemFile(record, given[index]!, plan.candidatesDir, stem);
      return { record, stem, path: file, givenPath: given[index] ?? file, index, total: records.length };
    }),
  );
}

function sumSpent(states: readonly ProblemState[]): Partial<BudgetUsage> {
  return {
    tokens: states.reduce((sum, state) => sum + state.spent.tokens, 0),
    costUsd: states.reduce((sum, state) => sum + state.spent.costUsd, 0),
    deviceMs: states.reduce((sum, state) => sum + state.spent.deviceMs, 0),
  };
}

/** Stores the problems and creates the run, then searches every problem. */
export async function startOptimizeRun(input: OptimizePlanInput, deps: OptimizeDependencies, options: { runId?: string } = {}): Promise<RunReport> {
  const plan = optimizePlanSchema.parse(input);
  const records: ProblemRecord[] = [];
  for (const file of plan.problems) {
    const source = await readFile(file, 'utf8');
    const record = await deps.store.upsertProblem({ name: await problemStem(file), source, path: file });
    if (records.some((known) => known.hash === record.hash)) continue;
    records.push(record);
    plan.problemPaths[record.hash] = file;
  }
  const describe = deps.model.describe();
  const run = await deps.store.createRun({
    ...(options.runId ? { id: options.runId } : {}),
    strategy: plan.strategy,
    model: `${describe.provider}:${describe.modelId}`,
    config: JSON.parse(JSON.stringify(plan)) as JsonObject,
    problemHashes: records.map((record) => record.hash),
  });
  return executeRun(run, plan, records, deps, false);
}

/** A stored run with its plan, checked. Throws `OptimizeRequestError` for an unknown run or a plan this version cannot read. */
export async function loadRunPlan(store: RunStore, runId: string): Promise<{ run: Run; plan: OptimizePlan }> {
  const run = await store.getRun(runId);
  if (!run) throw new OptimizeRequestError(`no run \`${runId}\` in ${store.location}: \`kforge runs list\` shows the run ids`);
  const parsed = optimizePlanSchema.safeParse(run.config);
  if (!parsed.success) {
    throw new OptimizeRequestError(
      `run \`${runId}\` was not made by \`kforge optimize\` or by an incompatible version: ${parsed.error.issues[0]?.message ?? 'bad config'}`,
    );
  }
  return { run, plan: parsed.data };
}

/**
 * Continues a stopped or killed run: finished evaluations are kept, candidates stored but not
 * evaluated are evaluated first, and each unfinished problem's strategy continues from its
 * history in the store.
 */
export async function resumeOptimizeRun(runId: string, deps: OptimizeDependencies): Promise<RunReport> {
  const { run, plan } = await loadRunPlan(deps.store, runId);
  const records = await deps.store.listRunProblems(runId);
  await deps.store.updateRunStatus(runId, 'running');
  return executeRun(run, plan, records, deps, true);
}

/** How a problem's state is read back from the store (its candidates' files named as the run writes them). */
function problemStateOptions(runId: string, plan: OptimizePlan, entry: ProblemEntry): LoadProblemStateOptions {
  return {
    runId,
    problemHash: entry.record.hash,
    strategy: plan.strategy,
    speedupBaseline: plan.speedupBaseline,
    minRelativeGain: plan.minRelativeGain,
    candidatePath: (id) => candidateFilePath(plan.candidatesDir, entry.stem, entry.record.hash, id),
  };
}

/** What every problem's search shares: the run's store, model, evaluator, limiter, budget and stop signal. */
function searchContext(
  runId: string,
  plan: OptimizePlan,
  deps: OptimizeDependencies,
  states: readonly ProblemState[],
  signal: AbortSignal,
  now: () => number,
): ProblemSearchContext {
  const describe = deps.model.describe();
  return {
    runId,
    plan,
    store: deps.store,
    model: deps.model,
    modelLabel: `${describe.provider}:${describe.modelId}`,
    limiter: new ConcurrencyLimiter({ defaultLimit: plan.defaultConcurrency, limits: plan.concurrency }),
    evaluator: deps.evaluator,
    runBudget: new BudgetTracker(plan.total, { spent: sumSpent(states), now }),
    signal,
    ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
    now,
  };
}

async function executeRun(run: Run, plan: OptimizePlan, records: readonly ProblemRecord[], deps: OptimizeDependencies, resumed: boolean): Promise<RunReport> {
  const now = deps.now ?? Date.now;
  // The run stops on the caller's signal (Ctrl-C) or on a `stop` action recorded in the store.
  const stopper = new AbortController();
  const stopRun = (): void => stopper.abort(deps.signal?.reason ?? new Error('stopped'));
  if (deps.signal?.aborted) stopRun();
  deps.signal?.addEventListener('abort', stopRun, { once: true });
  const signal = stopper.signal;
  const entries = await problemEntries(records, plan);
  const loadOptions = (entry: ProblemEntry): LoadProblemStateOptions => problemStateOptions(run.id, plan, entry);
  const states = await Promise.all(entries.map((entry) => loadProblemState(deps.store, loadOptions(entry))));
  const context = searchContext(run.id, plan, deps, states, signal, now);
  deps.onEvent?.({ type: 'run-started', runId: run.id, problemCount: entries.length, resumed });
  const target = deps.target ?? (runsOnHost(plan.evaluation.backend) ? describeHostCpu() : describeNamedDevice('NVIDIA GPU', plan.evaluation.backend));
  let currentTarget = target;
  const interventions = new RunInterventions({
    runId: run.id,
    plan,
    store: deps.store,
    evaluator: deps.evaluator,
    entries,
    signal,
    deviceName: () => currentTarget.name,
    stop: () => stopper.abort(new Error('stopped by a `stop` action')),
    onError: (error) => deps.onEvent?.({ type: 'intervention-failed', runId: run.id, message: error instanceof Error ? error.message : String(error) }),
  });
  const watcher = new RunActionWatcher({
    store: deps.store,
    runId: run.id,
    afterId: await RunActionWatcher.latestActionId(deps.store, run.id),
    onAction: (action) => interventions.handle(action),
    onError: (error) => deps.onEvent?.({ type: 'intervention-failed', runId: run.id, message: error instanceof Error ? error.message : String(error) }),
    ...(deps.actionPollMs === undefined ? {} : { intervalMs: deps.actionPollMs }),
  });
  context.sessions = interventions;
  watcher.start();
  let status: RunOutcomeStatus;
  try {
    status = await searchProblems(context, entries, states, target, (next) => {
      currentTarget = next;
    });
    await interventions.drain();
  } finally {
    await watcher.close();
    deps.signal?.removeEventListener('abort', stopRun);
  }
  if (signal.aborted) status = 'stopped';
  const reports: ProblemReport[] = [];
  for (const entry of entries) reports.push(await problemReport(plan, entry, await loadProblemState(deps.store, loadOptions(entry))));
  await deps.store.updateRunStatus(run.id, status);
  deps.onEvent?.({ type: 'run-finished', runId: run.id, status });
  return buildRunReport(run.id, status, reports);
}

/**
 * Searches the problems in order, skipping those that ended for good, and says how the run ended.
 * A fault that is not a stop marks the run `failed` and throws `OptimizeRunError`.
 */
async function searchProblems(
  context: ProblemSearchContext,
  entries: readonly ProblemEntry[],
  states: readonly ProblemState[],
  initialTarget: TargetDevice,
  onTarget: (target: TargetDevice) => void,
): Promise<RunOutcomeStatus> {
  const { signal, store, runId } = context;
  let target = initialTarget;
  let status: RunOutcomeStatus = 'finished';
  try {
    for (const [index, entry] of entries.entries()) {
      if (signal.aborted) break;
      if (states[index]!.finished) continue;
      const searched = await searchProblem(context, entry, states[index]!, target);
      target = searched.target;
      onTarget(target);
      if (searched.endReason === 'paused') status = 'paused';
    }
  } catch (error) {
    if (!SearchStoppedError.isInstance(error) && !signal.aborted) {
      const message = error instanceof Error ? error.message : String(error);
      await store.updateRunStatus(runId, 'failed', { error: message });
      context.onEvent?.({ type: 'run-finished', runId, status: 'failed' });
      throw new OptimizeRunError(runId, `run \`${runId}\` failed: ${message}`, { cause: error });
    }
  }
  return signal.aborted ? 'stopped' : status;
}

async function problemReport(plan: OptimizePlan, entry: ProblemEntry, state: ProblemState): Promise<ProblemReport> {
  const best = bestAttempt(state.attempts);
  const written = best ? await writeBestKernel(plan.outDir, entry.stem, best) : null;
  return {
    name: entry.stem,
    path: entry.givenPath,
    hash: entry.record.hash,
    ...countCandidates(state.attempts, state.pending.length),
    best: best && written ? { candidateId: best.candidate.id, verdict: best.result.verdict, result: best.result, ...written } : null,
    usage: state.spent,
    endReason: state.endReason,
  };
}
