/**
 * Longer than convention 4's 300 lines: `EvaluationRun` is one evaluation's conversation with its
 * two workers, and its steps (the reference, the candidate's build, correctness, timing, the
 * hand-overs) read and set one state (the workers, who is blamed, the guard's record, the outputs
 * judged so far). What needs none of it lives beside it: the requests (`run-requests.ts`), the
 * outcomes, the timing stage, the result's assembly.
 */
import { runsOnHost } from '../../backends/registry.js';
import type { Logger } from 'pino';
import type { CorrectnessSummary, EvaluationResult, StageLimits, TimingSummary } from '../../core/verdict.js';
import { assembleResult } from './evaluation-result.js';
import type { BaselineCache } from '../cache/baseline-cache.js';
import type { EvaluationPipeline, HeldDevice } from './evaluation-pipeline.js';
import type { EvaluationProgress } from '../evaluator.js';
import { withReportedTolerance, type EvaluationSettings } from './evaluation-settings.js';
import { outcomeOfFailure } from './failure-outcome.js';
import { answerBeforePolicy, outcomeOfJudgement, summarizeCorrectness } from './judgement-outcome.js';
import { outcome, type Outcome, type Step } from './outcome.js';
import { runCandidateTimingStage, type Baselines } from './candidate-timing-stage.js';
import type { HandedOutput, MessageOfType, Stage, WorkerEnvironment, WorkerMessage, WorkerMessageType } from '../process/protocol.js';
import { ProtocolError } from '../process/protocol-error.js';
import { GuardRecorder } from './guard-outcome.js';
import { lookUpBaselines, peekBaselines, storeBaselines } from './run-baselines.js';
import type { ScratchDirectory } from '../process/scratch-directory.js';
import type { SeedPlan } from './seeds.js';
import { machineFault, memoryOfWorkers } from './evaluation-faults.js';
import type { RandomInteger } from './seeds.js';
import { outcomeOfWorkerEnd } from './worker-end-outcome.js';
import { namingOriginals, stageCandidateInputs, type CandidateInputs } from './candidate-inputs.js';
import { isolationNote, isolationOf, type IsolationReport } from '../process/isolation-report.js';
import { OutputHandover, type HandoverJudged, type JudgeStep, type ListedOutput } from './output-handover.js';
import { EXIT_WINDOW_MS, type WorkerProcess } from '../process/worker-process.js';
import type { WorkerRole } from '../worker-role.js';
import { limitBasis, referenceTrialMs, sizedStageLimits } from './sized-stage-limits.js';
import { limitFlag } from './stage-limits.js';
import { candidateRequest, handoverChecks, referenceRequest } from './run-requests.js';

export interface EvaluationRunContext {
  settings: EvaluationSettings;
  seeds: SeedPlan;
  scratch: ScratchDirectory;
  problemSha256: string;
  baselineCache: BaselineCache;
  /** Starts a worker of a role in the scratch directory (or hands over a warm one). */
  startWorker: (role: WorkerRole, onProgress: (event: EvaluationProgress) => void) => WorkerProcess | Promise<WorkerProcess>;
  onProgress?: (event: EvaluationProgress) => void;
  /** Build before holding the device (see {@link EvaluationPipeline}); absent: the one-after-another order. */
  pipeline?: EvaluationPipeline;
  logger: Logger;
  now: () => Date;
  /** When the evaluation was asked for (default: when the run is made). */
  startedAt?: Date;
  /** Draws which batch output is kept (default `crypto.randomInt`). */
  random?: RandomInteger;
  /** The parent's monotonic clock in ms for timing the trusted batches (default `performance.now`). */
  clockMs?: () => number;
}

/**
 * One evaluation through the two worker roles of docs/worker-protocol.md: reference first (and
 * baselines when not cached), then the candidate's build, load and correctness trials, the judge,
 * the timed calls, and the judge again on a sample of the timed outputs. With a
 * {@link EvaluationPipeline} the candidate builds first and everything else waits for the device.
 */
export class EvaluationRun {
  readonly #context: EvaluationRunContext;
  readonly #workers: Partial<Record<WorkerRole, WorkerProcess>> = {};
  readonly #helloSeen = new Set<WorkerRole>();
  #environment: WorkerEnvironment | null = null;
  /** What the candidate's sandbox put in place (from its hello); null until then, or without one. */
  #isolation: IsolationReport | null = null;
  #blame: WorkerRole = 'candidate';
  #correctness: CorrectnessSummary | undefined;
  #timing: TimingSummary | undefined;
  #buildInfo: MessageOfType<'build-info'> | undefined;
  #buildDurationMs: number | null = null;
  #heldDevice: HeldDevice | undefined;
  /** Each stage's limit and how it was chosen, once the reference measured its trials (sized-stage-limits.ts). */
  #stageLimits: StageLimits | undefined;
  readonly #guard = new GuardRecorder();
  /** Where the candidate worker reads the problem and the candidate (copies in its scratch). */
  #staged: CandidateInputs | undefined;
  /** The candidate's outputs, each judged the moment it is handed over. */
  readonly #outputs: OutputHandover;

  /** When the evaluation began: baselines measured before it count as cached (see `#requestReference`). */
  readonly #startedAtMs: number;

  constructor(context: EvaluationRunContext) {
    this.#context = context;
    this.#startedAtMs = (context.startedAt ?? context.now()).getTime();
    this.#outputs = new OutputHandover({
      judge: (output, onReady) => this.#judgeHandedOver(output, onReady),
      tellCandidate: (line) => this.#workers.candidate?.send(line),
      ...(context.clockMs ? { clockMs: context.clockMs } : {}),
    });
  }

  /** Runs the evaluation and returns its result; the workers are dead when it returns. */
  async run(): Promise<EvaluationResult> {
    let ended: Outcome;
    try {
      ended = await (this.#context.pipeline ? this.#evaluatePipelined(this.#context.pipeline) : this.#evaluate());
    } finally {
      await this.#stopWorkers();
      this.#heldDevice?.release();
    }
    return this.#result(ended);
  }

  async #evaluate(): Promise<Outcome> {
    const baselines = await this.#prepareReference();
    if (!baselines.ok) return baselines.outcome;
    const started = await this.#startCandidate(false);
    if (!started.ok) return started.outcome;
    return this.#finishCandidate(baselines.value);
  }

  /** Build first (no device held), then the device, the reference, and the rest of the candidate. */
  async #evaluatePipelined(pipeline: EvaluationPipeline): Promise<Outcome> {
    let built: Step<MessageOfType<'built'> | null> | undefined;
    try {
      built = await this.#startCandidate(true);
    } finally {
      const cacheHit = built?.ok ? (built.value?.cache_hit ?? null) : null;
      pipeline.buildFinished({ built: built?.ok === true, cacheHit, durationMs: this.#buildDurationMs });
    }
    if (!built.ok) return built.outcome;
    this.#heldDevice = await pipeline.acquireDevice();
    const baselines = await this.#prepareReference();
    if (!baselines.ok) return baselines.outcome;
    const grant = this.#heldDevice.grantBytes;
    this.#workers.candidate!.send({ v: 1, type: 'continue', ...(grant ? { memory_grant_bytes: Math.floor(grant) } : {}) });
    return this.#finishCandidate(baselines.value);
  }

  /** From the correctness outputs on: judge, then time (when correct and timed) and judge the sample. */
  async #finishCandidate(baselines: Baselines | null): Promise<Outcome> {
    const checked = await this.#checkCandidate();
    if (!checked.ok) return checked.outcome;
    const candidate = this.#workers.candidate!;
    if (checked.value.verdict !== 'correct' || baselines === null) {
      // Not correct, or correctness only (--no-timing): the candidate is not timed.
      candidate.send({ v: 1, type: 'stop' });
      return checked.value;
    }
    return this.#timeCandidate(baselines);
  }

  /**
   * A pipeline's baseline prefetch, while candidates build: the reference role alone measures and
   * stores this problem's baselines when nobody has them yet, holding the device only then (a key
   * already known costs no device time). The workers are dead when it returns.
   */
  async prefetchBaselines(): Promise<'cached' | 'measured' | 'failed'> {
    const pipeline = this.#context.pipeline;
    if (!pipeline) throw new Error('a baseline prefetch runs in a pipeline');
    try {
      const hello = await this.#referenceHello();
      if (!hello.ok) return 'failed';
      if (await peekBaselines(this.#context, this.#environment)) return 'cached';
      this.#heldDevice = await pipeline.acquireDevice();
      const prepared = await this.#requestReference(hello.value);
      if (!prepared.ok) return 'failed';
      return prepared.value?.cached === false ? 'measured' : 'cached';
    } finally {
      await this.#stopWorkers();
      this.#heldDevice?.release();
    }
  }

  /** Reference role: hello, the reference outputs, and the baselines (cached or measured; null untimed). */
  async #prepareReference(): Promise<Step<Baselines | null>> {
    const hello = await this.#referenceHello();
    if (!hello.ok) return hello;
    return this.#requestReference(hello.value);
  }

  /** Starts the reference role and reads its hello (the machine it describes becomes the run's). */
  async #referenceHello(): Promise<Step<WorkerProcess>> {
    const reference = await this.#start('reference');
    const hello = await this.#expect(reference, 'hello');
    if (!hello.ok) return hello;
    this.#environment = this.#environmentOf(hello.value);
    return { ok: true, value: reference };
  }

  /** The reference request (with the baselines when not cached), its outputs and its baselines. */
  async #requestReference(reference: WorkerProcess): Promise<Step<Baselines | null>> {
    const { settings } = this.#context;
    const cached = await lookUpBaselines(this.#context, this.#environment);
    reference.send(referenceRequest(this.#context, this.#environment, settings.timing && !cached));
    const ready = await this.#expect(reference, 'reference-ready');
    if (!ready.ok) return ready;
    // The run's tolerance, chosen by the reference role from its output's dtype: every judge request uses it.
    this.#context.settings = withReportedTolerance(settings, ready.value);
    this.#sizeStageLimits(referenceTrialMs(ready.value));
    if (!settings.timing) return { ok: true, value: null };
    // `cached` (the result's `baseline_cached`) says the baselines were measured before this
    // evaluation began; ones a pipeline's prefetch measured during its build were measured for it.
    if (cached) return { ok: true, value: { eager: cached.eager, compile: cached.compile, cached: Date.parse(cached.measured_at) < this.#startedAtMs } };
    const measured = await this.#expect(reference, 'baseline');
    if (!measured.ok) return measured;
    await storeBaselines(this.#context, this.#environment, measured.value);
    return { ok: true, value: { eager: measured.value.eager, compile: measured.value.compile, cached: false } };
  }

  /**
   * The stage limits that follow the problem: a multiple of the reference's time for one trial
   * (measured just now, on this machine) for the candidate's stages and the judge; the flags the user
   * gave win. Workers already running get them too (the reference's baseline stage may be running).
   */
  #sizeStageLimits(trialMs: number | null): void {
    const { stagesMs, limits } = sizedStageLimits(this.#context.settings, trialMs);
    this.#context.settings = { ...this.#context.settings, stageLimitsMs: stagesMs };
    this.#stageLimits = { reference_trial_ms: trialMs, stages: limits };
    for (const worker of Object.values(this.#workers)) worker.setStageLimits(stagesMs);
  }

  /** Why a stage's limit is what it is, for a time-out's sentence. */
  #limitBasis(stage: string): string | null {
    if (!(stage in this.#context.settings.stageLimitsMs)) return null;
    const limits = this.#stageLimits ?? { reference_trial_ms: null, stages: sizedStageLimits(this.#context.settings, null).limits };
    const stages: Partial<Record<string, StageLimits['stages'][string]>> = limits.stages;
    const basis = limitBasis(stage as Stage, stages[stage], limits.reference_trial_ms, limitFlag(stage));
    return stage === 'correctness' || stage === 'timing' ? `${basis}; the judge's time is not counted` : basis;
  }

  /** `hello` describes the machine; on the cpu backend the run's device is the CPU. */
  #environmentOf(hello: MessageOfType<'hello'>): WorkerEnvironment {
    const environment = hello.environment;
    return runsOnHost(this.#context.settings.backend) ? { ...environment, device: 'cpu' } : environment;
  }

  /** What the candidate's sandbox put in place, once its hello arrived (null before, or without a report). */
  get isolation(): IsolationReport | null {
    return this.#isolation;
  }

  /** Candidate role: hello and the request; with `awaitDevice`, also its build-info and `built`. */
  async #startCandidate(awaitDevice: boolean): Promise<Step<MessageOfType<'built'> | null>> {
    const { settings, scratch } = this.#context;
    const candidate = await this.#start('candidate');
    const hello = await this.#expect(candidate, 'hello');
    if (!hello.ok) return hello;
    this.#environment ??= this.#environmentOf(hello.value);
    this.#isolation = isolationOf(hello.value.environment);
    const inputs = await stageCandidateInputs(scratch, settings.problemPath, settings.candidatePath);
    this.#staged = inputs;
    const buildDirectory = this.#context.pipeline?.buildDirectory ?? scratch.buildDirectory;
    candidate.send(candidateRequest(this.#context, inputs, buildDirectory, awaitDevice));
    if (!awaitDevice) return { ok: true, value: null };
    let built = await this.#expect(candidate, 'build-info', 'built');
    if (built.ok && built.value.type === 'build-info') {
      this.#buildInfo = built.value;
      built = await this.#expect(candidate, 'built');
    }
    if (!built.ok) return built;
    if (built.value.type !== 'built') return this.#breach(candidate, 'expected `built`');
    return { ok: true, value: built.value };
  }

  /** Candidate role up to the judged correctness trials; the value is the judgement's outcome. */
  async #checkCandidate(): Promise<Step<Outcome>> {
    const { settings, seeds } = this.#context;
    const candidate = this.#workers.candidate!;
    let saved = await this.#expect(candidate, 'build-info', 'correctness-outputs');
    if (saved.ok && saved.value.type === 'build-info') {
      this.#buildInfo = saved.value;
      saved = await this.#expect(candidate, 'correctness-outputs');
    }
    if (!saved.ok) return saved;
    if (saved.value.type !== 'correctness-outputs') return this.#breach(candidate, 'expected `correctness-outputs`');
    const outputs = saved.value.outputs;
    if (outputs.map((output) => output.seed).join() !== seeds.correctness.join()) {
      return this.#breach(candidate, 'the correctness outputs do not match the requested seeds');
    }
    const judged = await this.#judge(outputs);
    if (!judged.ok) return judged;
    this.#correctness = summarizeCorrectness(judged.value, settings.tolerance, settings.toleranceProfile);
    const verdict = outcomeOfJudgement(judged.value, settings.tolerance);
    const generalisation = saved.value.generalisation ?? [];
    if (verdict.verdict !== 'correct' || generalisation.length === 0) return { ok: true, value: verdict };
    const judgeable = generalisation.filter((entry) => !entry.error && entry.id !== null);
    let variants: MessageOfType<'judgement'> | null = null;
    if (judgeable.length > 0) {
      const judgedVariants = await this.#judge(judgeable.map((entry) => ({ id: entry.id!, seed: entry.seed })));
      if (!judgedVariants.ok) return judgedVariants;
      variants = judgedVariants.value;
    }
    return { ok: true, value: this.#guard.generalisation(generalisation, variants, settings.shapesGate) ?? verdict };
  }

  /** The candidate's timing stage (candidate-timing-stage.ts); its summary is the result's `timing`. */
  async #timeCandidate(baselines: Baselines): Promise<Outcome> {
    const candidate = this.#workers.candidate!;
    const timed = await runCandidateTimingStage({
      settings: this.#context.settings,
      seeds: this.#context.seeds,
      candidate,
      reference: this.#workers.reference!,
      baselines,
      roofline: this.#guard.roofline,
      expect: (worker, ...types) => this.#expect(worker, ...types),
      tampered: (reason) => this.#tampered(candidate, reason),
      judge: (outputs) => this.#judge(outputs),
      blamesCandidate: () => this.#blame === 'candidate',
      earlyJudgingMs: () => this.#outputs.earlyJudgingMs,
      isGuardMessage,
      ...(this.#context.clockMs ? { clockMs: this.#context.clockMs } : {}),
      ...(this.#context.random ? { random: this.#context.random } : {}),
    });
    if (!timed.ok) return timed.outcome;
    this.#timing = timed.value;
    return this.#guard.speedOfLight(timed.value.candidate_ms.median) ?? { verdict: 'correct', reasons: [] };
  }

  async #tampered(candidate: WorkerProcess, reason: string): Promise<Outcome> {
    this.#blame = 'candidate';
    candidate.fail(new ProtocolError(reason, { role: 'candidate' }));
    await candidate.result;
    return outcome('rejected', 'timing-tampered', `the candidate's process broke the timing protocol: ${reason} (docs/timing.md)`);
  }

  async #start(role: WorkerRole): Promise<WorkerProcess> {
    const worker = await this.#context.startWorker(role, (event) => {
      if (role === 'candidate' && event.kind === 'stage-finished' && event.stage === 'build') this.#buildDurationMs = event.durationMs;
      this.#context.onProgress?.(event);
    });
    // The limits as they stand now: sized already when the reference measured its trials first.
    worker.setStageLimits(this.#context.settings.stageLimitsMs);
    this.#workers[role] = worker;
    return worker;
  }

  /** The next message, which must be of one of `types`; a failure or the worker's end stops the run. */
  async #expect<T extends WorkerMessageType>(worker: WorkerProcess, ...types: T[]): Promise<Step<MessageOfType<T>>> {
    let event = await worker.next();
    while (event.type === 'message' && !(types as string[]).includes(event.message.type)) {
      if (isGuardMessage(event.message)) this.#guard.record(event.message);
      else if (event.message.type === 'handover' && worker.role === 'candidate') {
        // An output handed over the moment its call returned (docs/worker-protocol.md): the judge
        // takes and judges it before the candidate goes on. Only once there is a reference to
        // judge it: a `handover` written during the build is forged.
        if (!this.#workers.reference) return this.#breach(worker, 'sent `handover` before any output could have been computed');
        // The candidate waits while the judge takes and judges its output: not its time.
        worker.pauseStageClock();
        let failed: Awaited<ReturnType<OutputHandover['accept']>>;
        try {
          failed = await this.#outputs.accept(event.message);
        } finally {
          worker.resumeStageClock();
        }
        if (failed) return failed;
      } else break;
      event = await worker.next();
    }
    const expected = types.join('` or `');
    if (event.type === 'exit') {
      this.#blame = worker.role;
      return { ok: false, outcome: outcomeOfWorkerEnd(event.result, expected, this.#helloSeen.has(worker.role), (stage) => this.#limitBasis(stage)) };
    }
    const message = event.message;
    if (message.type === 'hello') this.#helloSeen.add(worker.role);
    if ((types as string[]).includes(message.type)) return { ok: true, value: message as MessageOfType<T> };
    this.#blame = worker.role;
    if (message.type === 'fault') throw machineFault(worker.role, message);
    if (message.type === 'failure') {
      return { ok: false, outcome: this.#correctnessFirst(this.#guard.staticRejection(outcomeOfFailure(message, this.#environment?.cuda ?? null))) };
    }
    return this.#breach(worker, `expected \`${expected}\`, got \`${message.type}\``);
  }

  /**
   * A rejection the policy decided from what ran (`torch-fallback`, `own-kernel`,
   * `silent-fallback`) comes after the traced call's output was handed over and judged: when that
   * answer is wrong, the judgement's verdict is said first (`incorrect`, with the policy's reasons
   * after its own) and its error profile kept (docs/worker-protocol.md, "Verdicts from the guard").
   */
  #correctnessFirst(ended: Outcome): Outcome {
    const judged = this.#outputs.judgedSoFar('correctness-');
    const { tolerance, toleranceProfile } = this.#context.settings;
    const first = answerBeforePolicy(ended, judged, tolerance);
    if (first !== ended && judged) this.#correctness = summarizeCorrectness(judged, tolerance, toleranceProfile);
    return first;
  }

  /** Kills a worker that sent something out of order and reports it as a protocol failure. */
  async #breach(worker: WorkerProcess, reason: string): Promise<{ ok: false; outcome: Outcome }> {
    this.#blame = worker.role;
    worker.fail(new ProtocolError(reason, { role: worker.role }));
    const result = await worker.result;
    return { ok: false, outcome: outcomeOfWorkerEnd(result, 'nothing more', true) };
  }

  /** The judgement of listed outputs in their order, given when each was handed over. */
  #judge(outputs: readonly ListedOutput[]): Promise<JudgeStep> {
    return Promise.resolve(this.#outputs.judgement(outputs));
  }

  /** One handed-over output through the judge: `handover-ready` relayed to the candidate, `handover-received`, the judgement. */
  async #judgeHandedOver(output: HandedOutput, onReady: (transport?: 'descriptor') => void): Promise<HandoverJudged> {
    const reference = this.#workers.reference!;
    const { tolerance, stageLimitsMs } = this.#context.settings;
    reference.send({ v: 1, type: 'judge', atol: tolerance.atol, rtol: tolerance.rtol, outputs: [output], stage_limit_ms: stageLimitsMs.judge });
    const clock = this.#context.clockMs ?? (() => performance.now());
    let received: MessageOfType<'handover-received'> | null = null;
    let receivedAtMs: number | null = null;
    for (;;) {
      const next = await this.#expect(reference, 'handover-ready', 'handover-received', 'judgement');
      if (!next.ok) return { step: next, received, receivedAtMs };
      const message = next.value;
      if (message.type === 'judgement') {
        if (message.trials.length !== 1)
          return { step: await this.#breach(reference, `judged ${message.trials.length} outputs, 1 was sent`), received, receivedAtMs };
        return { step: { ok: true, value: message }, received, receivedAtMs };
      }
      if (message.id !== output.id)
        return { step: await this.#breach(reference, `answered about output ${message.id} while judging ${output.id}`), received, receivedAtMs };
      if (message.type === 'handover-ready') onReady(message.transport);
      else [received, receivedAtMs] = [message, clock()];
    }
  }

  /** The guard report's `handover` entry, once outputs were handed over. */
  #recordHandovers(): void {
    const figures = this.#outputs.figures;
    if (figures.outputs > 0) this.#guard.record(handoverChecks(figures));
  }

  async #stopWorkers(): Promise<void> {
    await Promise.all(Object.values(this.#workers).map((worker) => worker.finish(EXIT_WINDOW_MS)));
  }

  async #result(finished: Outcome): Promise<EvaluationResult> {
    const blamed = this.#workers[this.#blame] ?? this.#workers.reference;
    const results = await Promise.all(Object.values(this.#workers).map((worker) => worker.result));
    const note = this.#isolation ? isolationNote(this.#isolation) : null;
    if (note) this.#guard.note(note);
    this.#recordHandovers();
    const { outcome: ended, attribution } = this.#guard.attributed(finished, this.#context.settings.guardPolicy);
    const result = assembleResult({
      settings: this.#context.settings,
      outcome: ended,
      attribution,
      output: blamed ? await blamed.result : null,
      stageDurationsMs: Object.assign({}, ...results.map((result) => result.stageDurationsMs)),
      stageLimits: this.#stageLimits ?? { reference_trial_ms: null, stages: sizedStageLimits(this.#context.settings, null).limits },
      memory: memoryOfWorkers(results),
      environment: this.#environment && this.#isolation ? { ...this.#environment, isolation: this.#isolation } : this.#environment,
      correctness: this.#correctness,
      timing: this.#timing,
      buildInfo: this.#buildInfo,
      guard: this.#guard.report(),
    });
    const { problemPath, candidatePath } = this.#context.settings;
    return this.#staged ? namingOriginals(result, this.#staged, { problemPath, candidatePath }) : result;
  }
}

const GUARD_MESSAGE_TYPES: ReadonlySet<string> = new Set(['guard', 'guard-checks', 'audit', 'roofline', 'attribution', 'reference-ops']);

/** The guard's informational messages, which may arrive between any two expected ones. */
function isGuardMessage(message: WorkerMessage): message is MessageOfType<'guard' | 'guard-checks' | 'audit' | 'roofline' | 'attribution' | 'reference-ops'> {
  return GUARD_MESSAGE_TYPES.has(message.type);
}
