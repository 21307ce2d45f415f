import { backendModule } from '../../backends/registry.js';
import { randomInt } from 'node:crypto';
import type { TimingSummary } from '../../core/verdict.js';
import type { BaselineEntry, MessageOfType, WorkerMessage, WorkerMessageType } from '../process/protocol.js';
import { EXIT_WINDOW_MS, type WorkerProcess } from '../process/worker-process.js';
import { CandidateTimingDriver, type DrivenTiming } from './candidate-timing-driver.js';
import { median } from '../timing/statistics.js';
import { contentCount } from '../timing/timed-contents.js';
import { TimingBudget } from '../timing/timing-budget.js';
import { summarizeTiming } from '../timing/timing-summary.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import { outcomeOfTimedJudgement } from './judgement-outcome.js';
import { outcome, type Outcome, type Step } from './outcome.js';
import type { JudgeStep, ListedOutput } from './output-handover.js';
import type { RandomInteger, SeedPlan } from './seeds.js';

/** Eager re-timed beside the candidate: calls, warm-up calls and share of the timing budget. */
const ANCHOR_CALLS = 30;
const ANCHOR_WARMUP = 3;
const ANCHOR_BUDGET_SHARE = 0.1;

/** The baselines' raw times (an entry is null when not measured) and where they came from. */
export interface Baselines {
  eager: BaselineEntry | null;
  compile: BaselineEntry | null;
  cached: boolean;
}

/** What the timing stage borrows from its evaluation (EvaluationRun). */
export interface CandidateTimingStageOptions {
  settings: EvaluationSettings;
  seeds: SeedPlan;
  candidate: WorkerProcess;
  reference: WorkerProcess;
  baselines: Baselines;
  /** The candidate's roofline message: its input and output bytes size the timed contents. */
  roofline: MessageOfType<'roofline'> | undefined;
  /** The next message of `worker`, of one of `types` (guard messages are recorded on the way). */
  expect: <T extends WorkerMessageType>(worker: WorkerProcess, ...types: T[]) => Promise<Step<MessageOfType<T>>>;
  /** Ends the candidate for breaking the timing protocol: its outcome. */
  tampered: (reason: string) => Promise<Outcome>;
  judge: (outputs: readonly ListedOutput[]) => Promise<JudgeStep>;
  /** Whether a failure now is the candidate's (not the reference's or kforge's). */
  blamesCandidate: () => boolean;
  /** Time spent judging outputs handed over during the timed calls, ms (not the candidate's time). */
  earlyJudgingMs: () => number;
  isGuardMessage: (message: WorkerMessage) => boolean;
  clockMs?: () => number;
  random?: RandomInteger;
}

/**
 * The candidate role's timing stage (docs/timing.md): `continue` with the contents per model, the
 * parent-driven calls and trusted batches, eager re-timed beside it, and the judge on the kept
 * outputs. A message out of order or a kept output from the wrong inputs is `timing-tampered`.
 * Ends with the timing summary, or with the outcome that stopped it.
 */
export async function runCandidateTimingStage(options: CandidateTimingStageOptions): Promise<Step<TimingSummary>> {
  const { settings, seeds, candidate, roofline } = options;
  const inputBytes = roofline?.input_bytes;
  const contents = contentCount(seeds.timing.length, settings.warmupTrials, settings.perfTrials, typeof inputBytes === 'number' ? inputBytes : 0);
  const clock = options.clockMs ?? (() => performance.now());
  // Judging outputs handed over during the timed calls (`kept`) is not the candidate's time.
  const budgetClock = (): number => clock() - options.earlyJudgingMs();
  const budget = new TimingBudget({
    budgetMs: settings.timingBudgetMs,
    perfTrials: settings.perfTrials,
    warmupTrials: settings.warmupTrials,
    warmupMs: settings.warmupMs,
    now: budgetClock,
  });
  candidate.send({ v: 1, type: 'continue', contents_per_model: contents });
  const callBytes = typeof inputBytes === 'number' && typeof roofline?.output_bytes === 'number' ? inputBytes + roofline.output_bytes : null;
  const driver = new CandidateTimingDriver({
    candidate,
    reference: options.reference,
    expect: options.expect,
    tampered: options.tampered,
    timingSeeds: seeds.timing,
    warmupTrials: settings.warmupTrials,
    perfTrials: settings.perfTrials,
    sampleCalls: seeds.sampleCalls,
    contentsPerModel: contents,
    callBytes,
    reseed: false,
    budget,
    random: options.random ?? randomInt,
    now: clock,
  });
  const driven = await driver.run();
  if (!driven.ok) return { ok: false, outcome: asTampering(driven.outcome, options.blamesCandidate()) };
  const extra = await nothingMoreFrom(candidate, options.isGuardMessage);
  if (extra) return { ok: false, outcome: extra };
  const anchor = await retimeEager(options, budget.budgetMs);
  if (!anchor.ok) return anchor;
  const judged = await judgeKept(options, driven.value);
  if (judged) return { ok: false, outcome: judged };
  const { baselines } = options;
  return {
    ok: true,
    value: summarizeTiming({
      clock: backendModule(settings.backend).clock.clock,
      candidate: driven.value.timing,
      batches: driven.value.batches,
      eager: baselines.eager,
      compile: baselines.compile,
      baselineCached: baselines.cached,
      anchor: anchor.value,
      budget: budget.report(),
    }),
  };
}

/** The kept outputs of the timed calls and the batches, judged; an outcome when one fails. */
async function judgeKept(options: CandidateTimingStageOptions, driven: DrivenTiming): Promise<Outcome | null> {
  const samples = driven.kept.map(({ sample }) => sample);
  if (samples.length === 0) return null;
  const sampled = await options.judge(samples);
  if (!sampled.ok) return sampled.outcome;
  return outcomeOfTimedJudgement(
    sampled.value,
    samples.map((sample) => sample.call),
    options.settings.tolerance,
  );
}

/**
 * Eager re-timed in the reference worker beside the candidate: null when there is no eager figure
 * to anchor, or when its calls are too slow for a re-timing within a tenth of the budget (the
 * reference answers outside any stage, under the idle limit).
 */
async function retimeEager(options: CandidateTimingStageOptions, budgetMs: number): Promise<Step<BaselineEntry | null>> {
  const { settings, reference } = options;
  const eager = options.baselines.eager;
  if (!eager || !('times_ms' in eager)) return { ok: true, value: null };
  const calls = Math.min(ANCHOR_CALLS, settings.perfTrials) + Math.min(ANCHOR_WARMUP, settings.warmupTrials);
  if (median(eager.times_ms) * calls > ANCHOR_BUDGET_SHARE * budgetMs) return { ok: true, value: null };
  reference.send({
    v: 1,
    type: 'anchor',
    perf_trials: Math.min(ANCHOR_CALLS, settings.perfTrials),
    warmup_trials: Math.min(ANCHOR_WARMUP, settings.warmupTrials),
    budget_ms: ANCHOR_BUDGET_SHARE * budgetMs,
    ...(settings.warmupMs > 0 ? { warmup_ms: settings.warmupMs } : {}),
  });
  const anchored = await options.expect(reference, 'anchor');
  if (!anchored.ok) return anchored;
  return { ok: true, value: anchored.value.eager };
}

/** After `timing` the candidate must end without another message (a forged duplicate, P3). */
async function nothingMoreFrom(candidate: WorkerProcess, isGuardMessage: (message: WorkerMessage) => boolean): Promise<Outcome | null> {
  await candidate.finish(EXIT_WINDOW_MS);
  const event = await candidate.next();
  if (event.type === 'message' && !isGuardMessage(event.message)) {
    return outcome(
      'rejected',
      'timing-tampered',
      `the candidate's process wrote \`${event.message.type}\` after its timing message: a message it was not asked for (docs/timing.md)`,
    );
  }
  return null;
}

/** A protocol failure of the candidate in its timing stage is tampering with the timing. */
function asTampering(ended: Outcome, blamesCandidate: boolean): Outcome {
  const reason = ended.reasons[0];
  if (!blamesCandidate || ended.verdict !== 'crashed' || reason?.check !== 'protocol') return ended;
  return outcome('rejected', 'timing-tampered', `the candidate's process broke the timing protocol: ${reason.message}`);
}
