import type { Logger } from 'pino';
import type { CorrectnessSummary, EvaluationResult, TimingSummary } from '../core/verdict.js';
import { assembleResult } from './evaluation-result.js';
import { baselineCacheKey, type BaselineCache, type BaselineKeyMaterial, type CachedBaselines } from './baseline-cache.js';
import type { EvaluationProgress } from './evaluator.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import { outcomeOfFailure } from './failure-outcome.js';
import { outcomeOfJudgement, outcomeOfTimedJudgement, summarizeCorrectness } from './judgement-outcome.js';
import type { Outcome } from './outcome.js';
import type {
  BaselineEntry,
  BuildInfoMessage,
  MessageOfType,
  SavedOutput,
  WorkerEnvironment,
  WorkerMessageType,
} from './protocol.js';
import { ProtocolError } from './protocol-error.js';
import type { ScratchDirectory } from './scratch-directory.js';
import type { SeedPlan } from './seeds.js';
import { summarizeTiming } from './timing-summary.js';
import { outcomeOfWorkerEnd } from './worker-end-outcome.js';
import type { WorkerProcess } from './worker-process.js';
import type { WorkerRole } from './worker-role.js';

/** How long a worker may take to exit once kforge has what it needs from it, in ms. */
const EXIT_WINDOW_MS = 5000;

export interface EvaluationRunContext {
  settings: EvaluationSettings;
  seeds: SeedPlan;
  scratch: ScratchDirectory;
  problemSha256: string;
  baselineCache: BaselineCache;
  /** Starts a worker of a role in the scratch directory. */
  startWorker: (role: WorkerRole, onProgress: (event: EvaluationProgress) => void) => WorkerProcess;
  onProgress?: (event: EvaluationProgress) => void;
  logger: Logger;
  now: () => Date;
}

type Step<T> = { ok: true; value: T } | { ok: false; outcome: Outcome };

/** The baselines' raw times (an entry is null when not measured) and where they came from. */
interface Baselines {
  eager: BaselineEntry | null;
  compile: BaselineEntry | null;
  cached: boolean;
}

/**
 * One evaluation through the two worker roles of docs/worker-protocol.md: reference first (and
 * baselines when not cached), then the candidate's build, load and correctness trials, the judge,
 * the timed calls, and the judge again on a sample of the timed outputs.
 */
export class EvaluationRun {
  readonly #context: EvaluationRunContext;
  readonly #workers: Partial<Record<WorkerRole, WorkerProcess>> = {};
  readonly #helloSeen = new Set<WorkerRole>();
  #environment: WorkerEnvironment | null = null;
  #blame: WorkerRole = 'candidate';
  #correctness: CorrectnessSummary | undefined;
  #timing: TimingSummary | undefined;
  #buildInfo: BuildInfoMessage | undefined;

  constructor(context: EvaluationRunContext) {
    this.#context = context;
  }

  /** Runs the evaluation and returns its result; the workers are dead when it returns. */
  async run(): Promise<EvaluationResult> {
    let ended: Outcome;
    try {
      ended = await this.#evaluate();
    } finally {
      await this.#stopWorkers();
    }
    return this.#result(ended);
  }

  async #evaluate(): Promise<Outcome> {
    const baselines = await this.#prepareReference();
    if (!baselines.ok) return baselines.outcome;
    const checked = await this.#checkCandidate();
    if (!checked.ok) return checked.outcome;
    const candidate = this.#workers.candidate!;
    if (checked.value.verdict !== 'correct' || baselines.value === null) {
      // Not correct, or correctness only (--no-timing): the candidate is not timed.
      candidate.send({ v: 1, type: 'stop' });
      return checked.value;
    }
    candidate.send({ v: 1, type: 'continue' });
    return this.#timeCandidate(baselines.value);
  }

  /** Reference role: hello, the reference outputs, and the baselines (cached or measured; null untimed). */
  async #prepareReference(): Promise<Step<Baselines | null>> {
    const { settings, seeds } = this.#context;
    const reference = this.#start('reference');
    const hello = await this.#expect(reference, 'hello');
    if (!hello.ok) return hello;
    // `hello` describes the machine; on the cpu backend the run's device is the CPU.
    const environment = hello.value.environment;
    this.#environment = settings.backend === 'cpu' ? { ...environment, device: 'cpu' } : environment;
    const cached = await this.#cachedBaselines();
    reference.send({
      v: 1,
      type: 'reference',
      problem: settings.problemPath,
      backend: settings.backend,
      precision: settings.precision,
      preset: settings.preset,
      device: settings.device,
      correctness_seeds: seeds.correctness,
      timing_seeds: seeds.timing,
      baselines:
        settings.timing && !cached
          ? { eager: true, compile: true, perf_trials: settings.perfTrials, warmup_trials: settings.warmupTrials }
          : null,
    });
    const ready = await this.#expect(reference, 'reference-ready');
    if (!ready.ok) return ready;
    if (!settings.timing) return { ok: true, value: null };
    if (cached) return { ok: true, value: { eager: cached.eager, compile: cached.compile, cached: true } };
    const measured = await this.#expect(reference, 'baseline');
    if (!measured.ok) return measured;
    await this.#storeBaselines(measured.value);
    return { ok: true, value: { eager: measured.value.eager, compile: measured.value.compile, cached: false } };
  }

  /** Candidate role up to the judged correctness trials; the value is the judgement's outcome. */
  async #checkCandidate(): Promise<Step<Outcome>> {
    const { settings, seeds, scratch } = this.#context;
    const candidate = this.#start('candidate');
    const hello = await this.#expect(candidate, 'hello');
    if (!hello.ok) return hello;
    candidate.send({
      v: 1,
      type: 'candidate',
      problem: settings.problemPath,
      candidate: settings.candidatePath,
      backend: settings.backend,
      precision: settings.precision,
      preset: settings.preset,
      device: settings.device,
      correctness_seeds: seeds.correctness,
      timing_seeds: seeds.timing,
      perf_trials: settings.timing ? settings.perfTrials : 0,
      warmup_trials: settings.warmupTrials,
      sample_calls: seeds.sampleCalls,
      output_dir: scratch.outputDirectory,
      build_dir: scratch.buildDirectory,
    });
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
    return { ok: true, value: outcomeOfJudgement(judged.value, settings.tolerance) };
  }

  /** Candidate role after `continue`: the timed calls, and the judge on a sample of their outputs. */
  async #timeCandidate(baselines: Baselines): Promise<Outcome> {
    const { settings, seeds } = this.#context;
    const candidate = this.#workers.candidate!;
    const timed = await this.#expect(candidate, 'timing');
    if (!timed.ok) return timed.outcome;
    const timing = timed.value;
    const calls = timing.samples.map((sample) => sample.call);
    if (timing.times_ms.length !== settings.perfTrials || calls.join() !== seeds.sampleCalls.join()) {
      return (await this.#breach(candidate, 'the timing message does not hold the requested timed calls and samples')).outcome;
    }
    if (timing.samples.length > 0) {
      const sampled = await this.#judge(timing.samples.map(({ seed, path }) => ({ seed, path })));
      if (!sampled.ok) return sampled.outcome;
      const dishonest = outcomeOfTimedJudgement(sampled.value, calls, settings.tolerance);
      if (dishonest) return dishonest;
    }
    this.#timing = summarizeTiming({ candidate: timing, eager: baselines.eager, compile: baselines.compile, baselineCached: baselines.cached });
    return { verdict: 'correct', reasons: [] };
  }

  #start(role: WorkerRole): WorkerProcess {
    const worker = this.#context.startWorker(role, (event) => this.#context.onProgress?.(event));
    this.#workers[role] = worker;
    return worker;
  }

  /** The next message, which must be of one of `types`; a failure or the worker's end stops the run. */
  async #expect<T extends WorkerMessageType>(worker: WorkerProcess, ...types: T[]): Promise<Step<MessageOfType<T>>> {
    const event = await worker.next();
    const expected = types.join('` or `');
    if (event.type === 'exit') {
      this.#blame = worker.role;
      return { ok: false, outcome: outcomeOfWorkerEnd(event.result, expected, this.#helloSeen.has(worker.role)) };
    }
    const message = event.message;
    if (message.type === 'hello') this.#helloSeen.add(worker.role);
    if ((types as string[]).includes(message.type)) return { ok: true, value: message as MessageOfType<T> };
    this.#blame = worker.role;
    if (message.type === 'failure') {
      return { ok: false, outcome: outcomeOfFailure(message, this.#environment?.cuda ?? null) };
    }
    return this.#breach(worker, `expected \`${expected}\`, got \`${message.type}\``);
  }

  /** Kills a worker that sent something out of order and reports it as a protocol failure. */
  async #breach(worker: WorkerProcess, reason: string): Promise<{ ok: false; outcome: Outcome }> {
    this.#blame = worker.role;
    worker.fail(new ProtocolError(reason, { role: worker.role }));
    const result = await worker.result;
    return { ok: false, outcome: outcomeOfWorkerEnd(result, 'nothing more', true) };
  }

  async #judge(outputs: Array<Omit<SavedOutput, 'input_digest'> & { input_digest?: string }>): Promise<Step<MessageOfType<'judgement'>>> {
    const reference = this.#workers.reference!;
    const { tolerance } = this.#context.settings;
    reference.send({ v: 1, type: 'judge', atol: tolerance.atol, rtol: tolerance.rtol, outputs });
    const judged = await this.#expect(reference, 'judgement');
    if (judged.ok && judged.value.trials.length !== outputs.length) {
      return this.#breach(reference, `judged ${judged.value.trials.length} outputs, ${outputs.length} were sent`);
    }
    return judged;
  }

  /** What the baselines depend on; null when nothing is timed or the worker never said hello. */
  #baselineKeyMaterial(): BaselineKeyMaterial | null {
    const environment = this.#environment;
    const { settings } = this.#context;
    if (!environment || !settings.timing) return null;
    return {
      problem_sha256: this.#context.problemSha256,
      preset: settings.preset,
      precision: settings.precision,
      backend: settings.backend,
      // Host timings depend on the processor, so the cpu backend keys on its model.
      device: settings.backend === 'cpu' && typeof environment.cpu === 'string' ? `cpu: ${environment.cpu}` : environment.device,
      torch: environment.torch,
      cuda: environment.cuda,
      driver: environment.driver,
      perf_trials: settings.perfTrials,
    };
  }

  async #cachedBaselines(): Promise<CachedBaselines | null> {
    const material = this.#baselineKeyMaterial();
    if (!material || this.#context.settings.refreshBaselines) return null;
    const key = baselineCacheKey(material);
    const cached = await this.#context.baselineCache.get(key);
    this.#context.logger.debug({ key, hit: cached !== null }, 'baseline cache lookup');
    return cached;
  }

  async #storeBaselines(measured: MessageOfType<'baseline'>): Promise<void> {
    const material = this.#baselineKeyMaterial();
    if (!material) return;
    try {
      await this.#context.baselineCache.put({
        key: baselineCacheKey(material),
        key_material: material,
        measured_at: this.#context.now().toISOString(),
        eager: measured.eager,
        compile: measured.compile,
      });
    } catch (error) {
      this.#context.logger.warn({ err: error }, 'could not write the baseline cache; the baselines will be measured again next time');
    }
  }

  async #stopWorkers(): Promise<void> {
    await Promise.all(Object.values(this.#workers).map((worker) => worker.finish(EXIT_WINDOW_MS)));
  }

  async #result(ended: Outcome): Promise<EvaluationResult> {
    const blamed = this.#workers[this.#blame] ?? this.#workers.reference;
    const results = await Promise.all(Object.values(this.#workers).map((worker) => worker.result));
    return assembleResult({
      settings: this.#context.settings,
      outcome: ended,
      output: blamed ? await blamed.result : null,
      stageDurationsMs: Object.assign({}, ...results.map((result) => result.stageDurationsMs)),
      environment: this.#environment,
      correctness: this.#correctness,
      timing: this.#timing,
      buildInfo: this.#buildInfo,
    });
  }
}
