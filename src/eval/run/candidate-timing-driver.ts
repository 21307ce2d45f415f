import type { Outcome, Step } from './outcome.js';
import type { MessageOfType, TimedSample, WorkerMessageType } from '../process/protocol.js';
import type { RandomInteger } from './seeds.js';
import { BatchContents, timedCallContents, type ExpectedContents } from '../timing/timed-contents.js';
import type { TimingBudget } from '../timing/timing-budget.js';
import type { TimedBatch } from '../timing/trusted-bound.js';
import type { WorkerProcess } from '../process/worker-process.js';

/** Trusted batches per evaluation: after the warm-up, in the middle of the timed calls, at their end. */
export const BATCH_ROUNDS = 3;
/** Host time each batch aims at, at least, ms. */
export const BATCH_TARGET_MS = 50;
/** A batch also lasts at least this many times the slowest channel round trip measured before it. */
export const BATCH_OVERHEAD_MULTIPLE = 25;
/** Most calls in one batch. */
export const MAX_BATCH_CALLS = 5000;
/** Input and output bytes one batch may hold at once (fresh input sets and kept outputs). */
export const BATCH_POOL_BYTES = 512 * 1024 ** 2;
/** Round trips to the reference worker measured before each batch. */
export const PINGS_PER_BATCH = 3;

/** What the driver needs from the evaluation around it. */
export interface CandidateTimingDriverOptions {
  candidate: WorkerProcess;
  reference: WorkerProcess;
  /** The next message of `worker`, which must be of one of `types` (guard messages are recorded on the way). */
  expect: <T extends WorkerMessageType>(worker: WorkerProcess, ...types: T[]) => Promise<Step<MessageOfType<T>>>;
  /** Stops the candidate for breaking the timing protocol: `rejected`, `timing-tampered`. */
  tampered: (reason: string) => Promise<Outcome>;
  timingSeeds: readonly number[];
  warmupTrials: number;
  perfTrials: number;
  /** Timed calls whose outputs are kept, known only to this process. */
  sampleCalls: readonly number[];
  /** K, sent in `continue`. */
  contentsPerModel: number;
  /** Input plus output bytes of one call (the reference's roofline), or null when unknown. */
  callBytes: number | null;
  /** Reseed every batch call (the reference's forward draws random numbers). */
  reseed: boolean;
  budget: TimingBudget;
  random: RandomInteger;
  now: () => number;
}

/** A kept output with the contents the parent expects it to have been computed from. */
export interface KeptOutput {
  sample: TimedSample;
  expected: ExpectedContents;
}

/** The candidate's timing stage as the parent saw it. */
export interface DrivenTiming {
  timing: MessageOfType<'timing'>;
  batches: TimedBatch[];
  /** The per-call loop's and the batches' kept outputs, to judge. */
  kept: KeptOutput[];
}

/**
 * The parent's side of the candidate's timing stage (docs/timing.md): answers every `called` with a
 * `step` (keep this output or not, decided now; the next call, a batch, or the end, within the
 * budget), runs the trusted batches on its own clock, and checks that every message comes in
 * order and every kept output belongs to the call it was asked for (P2, P3).
 */
export class CandidateTimingDriver {
  readonly #options: CandidateTimingDriverOptions;
  readonly #samples: Set<number>;
  readonly #batches: TimedBatch[] = [];
  readonly #kept: KeptOutput[] = [];
  readonly #keptCalls: number[] = [];
  readonly #contents: BatchContents;
  #lastCalledMs: number | null = null;
  #shortestSpacingMs = Number.POSITIVE_INFINITY;

  constructor(options: CandidateTimingDriverOptions) {
    this.#options = options;
    this.#samples = new Set(options.sampleCalls);
    this.#contents = new BatchContents(options.timingSeeds, options.contentsPerModel);
  }

  async run(): Promise<Step<DrivenTiming>> {
    const { candidate, expect, perfTrials, warmupTrials } = this.#options;
    let phase: 'warmup' | 'timed' = warmupTrials > 0 ? 'warmup' : 'timed';
    let index = 0;
    for (;;) {
      const called = await expect(candidate, 'called');
      if (!called.ok) return called;
      if (called.value.phase !== phase || called.value.index !== index) {
        return this.#fail(`expected \`called\` for ${phase} call ${index}, got ${called.value.phase} call ${called.value.index}`);
      }
      this.#noteSpacing();
      this.#options.budget.start();
      const more = phase === 'warmup' ? this.#options.budget.moreWarmup(index) : this.#options.budget.moreTimed(index);
      const keep = phase === 'timed' && (this.#samples.has(index) || (!more && this.#keptCalls.length === 0));
      if (keep) this.#keptCalls.push(index);
      const batches = this.#batchesAfter(phase, index, more);
      const ran = await this.#step(keep, batches);
      if (!ran.ok) return ran;
      candidate.send({ v: 1, type: 'step', keep: keep && batches === 0, next: more ? 'call' : 'end' });
      if (more) index += 1;
      else if (phase === 'warmup') [phase, index] = ['timed', 0];
      else break;
    }
    const timing = await expect(candidate, 'timing');
    if (!timing.ok) return timing;
    return this.#finish(timing.value, perfTrials);
  }

  /** How many batches run after this call: one after the warm-up and in the middle, the rest at the end. */
  #batchesAfter(phase: 'warmup' | 'timed', index: number, more: boolean): number {
    const done = this.#batches.length;
    if (phase === 'warmup') return more ? 0 : 1;
    if (!more) return Math.max(0, BATCH_ROUNDS - done);
    return index === Math.floor(this.#options.perfTrials / 2) - 1 && done < BATCH_ROUNDS - 1 ? 1 : 0;
  }

  /** The batches after a call; the first batch step carries this call's `keep`. */
  async #step(keep: boolean, batches: number): Promise<Step<null>> {
    for (let round = 0; round < batches; round += 1) {
      const overheadMs = await this.#pings();
      if (!overheadMs.ok) return overheadMs;
      const calls = this.#batchCalls(batches - round, Math.max(...overheadMs.value));
      this.#options.candidate.send({ v: 1, type: 'step', keep: keep && round === 0, next: 'batch', calls, reseed: this.#options.reseed });
      const batch = await this.#batch(calls, overheadMs.value);
      if (!batch.ok) return batch;
    }
    return { ok: true, value: null };
  }

  /** Round trips of `ping` to the reference worker, which the candidate cannot reach, in ms. */
  async #pings(): Promise<Step<number[]>> {
    const { reference, expect, now } = this.#options;
    const overheadMs: number[] = [];
    for (let ping = 0; ping < PINGS_PER_BATCH; ping += 1) {
      const sentMs = now();
      reference.send({ v: 1, type: 'ping' });
      const pong = await expect(reference, 'pong');
      if (!pong.ok) return pong;
      overheadMs.push(now() - sentMs);
    }
    return { ok: true, value: overheadMs };
  }

  /**
   * Calls of the next batch: enough for {@link BATCH_TARGET_MS}, and for
   * {@link BATCH_OVERHEAD_MULTIPLE} round trips of the channel, of the slowest per-call figure known.
   */
  #batchCalls(roundsLeft: number, roundTripMs: number): number {
    const { callBytes, budget } = this.#options;
    const last = this.#batches.at(-1);
    const perCallMs = last ? last.elapsedMs / last.calls : this.#shortestSpacingMs;
    const byMemory = callBytes && callBytes > 0 ? Math.floor(BATCH_POOL_BYTES / callBytes) : MAX_BATCH_CALLS;
    const limit = Math.max(1, Math.min(MAX_BATCH_CALLS, byMemory));
    const wantedMs = Math.max(BATCH_TARGET_MS, BATCH_OVERHEAD_MULTIPLE * roundTripMs);
    const targetMs = Math.min(wantedMs, budget.remainingMs() / Math.max(1, roundsLeft));
    const wanted = Number.isFinite(perCallMs) && perCallMs > 0 ? Math.ceil(targetMs / perCallMs) : limit;
    // One call at least; no more than the target asks for, even below one per timed model: a call
    // of seconds made each batch a call per model, and three batches doubled a 30 s budget.
    return Math.min(limit, Math.max(wanted, 1));
  }

  async #batch(calls: number, overheadMs: number[]): Promise<Step<null>> {
    const { candidate, expect, now, random } = this.#options;
    const number = this.#batches.length;
    const ready = await expect(candidate, 'batch-ready');
    if (!ready.ok) return ready;
    if (ready.value.batch !== number || ready.value.calls !== calls) {
      return this.#fail(`expected \`batch-ready\` for batch ${number} of ${calls} calls, got batch ${ready.value.batch} of ${ready.value.calls}`);
    }
    const startedMs = now();
    candidate.send({ v: 1, type: 'go' });
    const done = await expect(candidate, 'batch-done');
    const elapsedMs = now() - startedMs;
    if (!done.ok) return done;
    if (done.value.batch !== number) return this.#fail(`expected \`batch-done\` for batch ${number}, got ${done.value.batch}`);
    const chosen = random(calls);
    candidate.send({ v: 1, type: 'batch-keep', calls: [chosen] });
    const outputs = await expect(candidate, 'batch-outputs');
    if (!outputs.ok) return outputs;
    const samples = outputs.value.samples;
    if (outputs.value.batch !== number || samples.length !== 1 || samples[0]!.call !== chosen) {
      return this.#fail(`batch ${number}'s outputs are not the one asked for (call ${chosen})`);
    }
    this.#kept.push({ sample: samples[0]!, expected: this.#contents.of(chosen) });
    this.#contents.finish(calls);
    this.#batches.push({ calls, elapsedMs, overheadMs });
    return { ok: true, value: null };
  }

  #noteSpacing(): void {
    const nowMs = this.#options.now();
    if (this.#lastCalledMs !== null) this.#shortestSpacingMs = Math.min(this.#shortestSpacingMs, nowMs - this.#lastCalledMs);
    this.#lastCalledMs = nowMs;
  }

  async #finish(timing: MessageOfType<'timing'>, perfTrials: number): Promise<Step<DrivenTiming>> {
    const { timingSeeds, warmupTrials, contentsPerModel } = this.#options;
    const timedCalls = this.#options.budget.report().timed_calls;
    if (timing.times_ms.length !== timedCalls || (timing.wall_ms && timing.wall_ms.length !== timedCalls)) {
      return this.#fail(`the timing message holds ${timing.times_ms.length} calls; ${timedCalls} of the ${perfTrials} asked for were made`);
    }
    if (timing.samples.map((sample) => sample.call).join() !== this.#keptCalls.join()) {
      return this.#fail(
        `the timing message's outputs are calls [${timing.samples.map((sample) => sample.call).join(', ')}], the parent kept [${this.#keptCalls.join(', ')}]`,
      );
    }
    if (timing.contents_per_model !== undefined && timing.contents_per_model !== contentsPerModel) {
      return this.#fail(`the worker used ${timing.contents_per_model} contents per model, the parent fixed ${contentsPerModel}`);
    }
    const perCall = timing.samples.map((sample) => ({ sample, expected: timedCallContents(timingSeeds, warmupTrials, contentsPerModel, sample.call) }));
    const kept = [...perCall, ...this.#kept];
    const wrong = kept.find(({ sample, expected }) => sample.seed !== expected.seed || (sample.input_seed ?? sample.seed) !== expected.inputSeed);
    if (wrong) return this.#fail(`the output handed over for call ${wrong.sample.call} was computed from other inputs than that call's`);
    return { ok: true, value: { timing, batches: this.#batches, kept } };
  }

  async #fail(reason: string): Promise<Step<never>> {
    return { ok: false, outcome: await this.#options.tampered(reason) };
  }
}
