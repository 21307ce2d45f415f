import type { KernelModel } from '../../llm/kernel-model.js';
import type { ProblemRecord, RunStore } from '../../store/run-store.js';
import type { StrategyName } from '../search/state/attempt.js';
import { BudgetTracker } from '../search/state/budget.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { problemEvaluation, type OptimizePlan } from './optimize-plan.js';
import type { ProblemState } from './problem-state-loader.js';
import { RecordedProblemSession } from './recorded-problem-session.js';
import type { ProblemEndReason, SearchEventListener } from '../search/state/search-events.js';
import { StallDetector } from '../search/state/stall-detector.js';
import { createStrategy, defaultSwitchTarget } from '../search/strategies/strategy-registry.js';
import type { TargetDevice } from '../search/prompts/target-device.js';
import type { SessionStopReason } from '../search/strategies/problem-session.js';

/** Everything one problem's search needs from its run. */
export interface ProblemSearchContext {
  runId: string;
  plan: OptimizePlan;
  store: RunStore;
  model: KernelModel;
  modelLabel: string;
  limiter: ConcurrencyLimiter;
  evaluator: Evaluator;
  runBudget: BudgetTracker;
  signal: AbortSignal;
  onEvent?: SearchEventListener;
  now: () => number;
  /** Where the live session of a problem is announced, so people's hints and edits reach it. */
  sessions?: { attach(problemHash: string, session: RecordedProblemSession): () => void };
}

/** A problem as the run searches it: its record, the file the evaluator reads, and its place. */
export interface ProblemEntry {
  record: ProblemRecord;
  /** The problem file given to the evaluator (the stored source, byte for byte). */
  path: string;
  /** The file as the user named it for this run (reports show it). */
  givenPath: string;
  /** Unique within the run: the file stem, with a hash prefix where two problems share a stem. */
  stem: string;
  index: number;
  total: number;
}

/** The end of one problem's search, with the session that ran it. */
export interface ProblemSearchResult {
  session: RecordedProblemSession;
  endReason: ProblemEndReason | null;
  target: TargetDevice;
}

function endReasonOf(stop: SessionStopReason | null): ProblemEndReason {
  if (stop === null) return 'strategy-finished';
  if (stop.kind === 'budget') return stop.limit;
  if (stop.kind === 'switch-strategy') return 'strategy-finished';
  return stop.kind;
}

/** Reasons after which the problem is never searched again (a resume skips it). */
const FINAL_REASONS: ReadonlySet<ProblemEndReason> = new Set([
  'candidates',
  'wall-clock',
  'tokens',
  'cost',
  'device-seconds',
  'target-speedup',
  'strategy-finished',
  'model-exhausted',
]);

/**
 * Searches one problem: evaluates what a killed run left pending, then hands the problem to its
 * strategy, switching strategy on a stall where so configured, and records how it ended.
 * A stop (Ctrl-C) records nothing, so a resume continues the problem.
 */
export async function searchProblem(
  context: ProblemSearchContext,
  problem: ProblemEntry,
  state: ProblemState,
  target: TargetDevice,
): Promise<ProblemSearchResult> {
  const { plan, store, runId } = context;
  const hash = problem.record.hash;
  const budget = new BudgetTracker(plan.perProblem, { parent: context.runBudget, spent: state.spent, now: context.now });
  const hints = (await store.listHints(runId, hash)).flatMap((action) => (action.note ? [action.note] : []));
  const folder = plan.problemFolders[problem.givenPath];
  const session = new RecordedProblemSession({
    runId,
    problem: { hash, name: problem.stem, path: problem.path },
    prompt: {
      name: problem.stem,
      referenceSource: problem.record.source,
      backend: plan.evaluation.backend,
      precision: plan.evaluation.precision,
      target,
      hints,
      ...(folder ? { folder } : {}),
    },
    store,
    model: context.model,
    modelLabel: context.modelLabel,
    limiter: context.limiter,
    evaluator: context.evaluator,
    evaluation: problemEvaluation(plan, problem.givenPath),
    budget,
    stall: new StallDetector({ patience: plan.stall.patience, policy: plan.stall.policy, sinceImprovement: state.sinceImprovement }),
    candidatesDir: plan.candidatesDir,
    history: state.attempts,
    signal: context.signal,
    minRelativeGain: plan.minRelativeGain,
    speedupBaseline: plan.speedupBaseline,
    ...(context.onEvent ? { onEvent: context.onEvent } : {}),
  });
  const detach = context.sessions?.attach(hash, session);
  try {
    return await runSession(context, problem, state, session, budget);
  } finally {
    detach?.();
  }
}

async function runSession(
  context: ProblemSearchContext,
  problem: ProblemEntry,
  state: ProblemState,
  session: RecordedProblemSession,
  budget: BudgetTracker,
): Promise<ProblemSearchResult> {
  const { plan } = context;
  const hash = problem.record.hash;
  let strategy: StrategyName = state.strategy;
  const emitBase = { problem: problem.stem, problemHash: hash };
  context.onEvent?.({ type: 'problem-started', ...emitBase, usage: budget.usage(), index: problem.index, total: problem.total, strategy });
  await session.recordEvent(state.paused ? 'problem-resumed' : 'problem-started', { strategy, index: problem.index });
  for (const candidate of state.pending) await session.evaluate(candidate);
  for (;;) {
    await createStrategy(strategy, plan.strategies).run(session, context.signal);
    if (session.stopReason()?.kind !== 'switch-strategy') break;
    const next = plan.stall.switchTo && plan.stall.switchTo !== strategy ? plan.stall.switchTo : defaultSwitchTarget(strategy);
    await session.recordEvent('strategy-switched', { from: strategy, to: next });
    context.onEvent?.({ type: 'strategy-switched', ...emitBase, usage: budget.usage(), from: strategy, to: next });
    strategy = next;
    session.reopen();
  }
  const stop = session.stopReason();
  if (stop?.kind === 'stopped' || context.signal.aborted) return { session, endReason: null, target: session.prompt.target };
  const endReason = endReasonOf(stop);
  if (endReason === 'paused') {
    await session.recordEvent('problem-paused', { reason: 'stalled' });
  } else {
    await session.recordEvent('problem-finished', { reason: endReason, final: FINAL_REASONS.has(endReason) });
  }
  context.onEvent?.({ type: 'problem-finished', ...emitBase, usage: budget.usage(), reason: endReason });
  return { session, endReason, target: session.prompt.target };
}
