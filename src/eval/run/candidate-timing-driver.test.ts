import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CandidateTimingDriver } from './candidate-timing-driver.js';
import { outcome, type Step } from './outcome.js';
import type { WorkerMessage } from '../process/protocol.js';
import { BatchContents, timedCallContents } from '../timing/timed-contents.js';
import { TimingBudget } from '../timing/timing-budget.js';
import type { WorkerRequest } from '../process/worker-requests.js';
import type { WorkerProcess } from '../process/worker-process.js';

const SEEDS = [21, 22];
const CONTENTS = 5;

/**
 * A candidate worker's timing stage as a script: it answers the driver's requests the way
 * worker/kforge_worker/timing/timing_stage.py does, unless `tamper` changes a message on its way out.
 */
class ScriptedCandidate {
  readonly sent: WorkerRequest[] = [];
  readonly queue: WorkerMessage[] = [];
  readonly kept: number[] = [];
  warmupCalls = 0;
  readonly #batches = new BatchContents(SEEDS, CONTENTS);
  #phase: 'warmup' | 'timed';
  #index = 0;
  #batch = 0;
  #batchCalls = 0;
  #timed = 0;

  constructor(
    readonly warmup: number,
    readonly tamper: (message: WorkerMessage) => WorkerMessage = (message) => message,
  ) {
    this.#phase = warmup > 0 ? 'warmup' : 'timed';
    this.#emit({ v: 1, type: 'called', phase: this.#phase, index: 0 });
  }

  send(request: WorkerRequest): void {
    this.sent.push(request);
    if (request.type === 'step') this.#step(request);
    if (request.type === 'go') this.#emit({ v: 1, type: 'batch-done', batch: this.#batch });
    if (request.type === 'batch-keep') {
      const call = request.calls[0]!;
      const expected = this.#batches.of(call);
      this.#batches.finish(this.#batchCalls);
      this.#emit({
        v: 1,
        type: 'batch-outputs',
        batch: this.#batch,
        samples: [{ call, seed: expected.seed, input_seed: expected.inputSeed, id: `batch-${this.#batch}-${call}` }],
      });
      this.#batch += 1;
    }
  }

  #step(request: Extract<WorkerRequest, { type: 'step' }>): void {
    if (request.keep) this.kept.push(this.#index);
    if (request.next === 'batch') {
      this.#batchCalls = request.calls!;
      this.#emit({ v: 1, type: 'batch-ready', batch: this.#batch, calls: request.calls! });
      return;
    }
    if (this.#phase === 'timed') this.#timed = this.#index + 1;
    else this.warmupCalls = this.#index + 1;
    if (request.next === 'call') this.#index += 1;
    else if (this.#phase === 'warmup') [this.#phase, this.#index] = ['timed', 0];
    else {
      const samples = this.kept.map((call) => {
        const expected = timedCallContents(SEEDS, this.warmup, CONTENTS, call);
        return { call, seed: expected.seed, input_seed: expected.inputSeed, id: `timed-${call}` };
      });
      this.#emit({ v: 1, type: 'timing', times_ms: Array.from({ length: this.#timed }, () => 1), samples, contents_per_model: CONTENTS });
      return;
    }
    this.#emit({ v: 1, type: 'called', phase: this.#phase, index: this.#index });
  }

  #emit(message: WorkerMessage): void {
    this.queue.push(this.tamper(message));
  }
}

/** `callMs`: how long each of the candidate's calls takes on the driver's clock (batch calls too). */
function drive(candidate: ScriptedCandidate, perfTrials: number, sampleCalls: number[], { callMs = 0, budgetMs = 60_000, warmupMs = 0 } = {}) {
  let clock = 0;
  const lastBatchCalls = (): number => {
    const step = candidate.sent.findLast((request) => request.type === 'step' && request.next === 'batch');
    return step?.type === 'step' ? (step.calls ?? 0) : 0;
  };
  const pings: number[] = [];
  const reference = { send: () => pings.push(clock) } as unknown as WorkerProcess;
  const worker = candidate as unknown as WorkerProcess;
  const driver = new CandidateTimingDriver({
    candidate: worker,
    reference,
    expect: async (from, ...types) => {
      clock += 0.5;
      const message = from === reference ? ({ v: 1, type: 'pong' } as WorkerMessage) : candidate.queue.shift();
      if (message?.type === 'called') clock += callMs;
      if (message?.type === 'batch-done') clock += callMs * lastBatchCalls();
      if (!message || !(types as string[]).includes(message.type)) {
        return { ok: false, outcome: outcome('crashed', 'protocol', `expected ${types.join('/')}, got ${message?.type}`) };
      }
      return { ok: true, value: message } as Step<never>;
    },
    tampered: async (reason) => outcome('rejected', 'timing-tampered', reason),
    timingSeeds: SEEDS,
    warmupTrials: candidate.warmup,
    perfTrials,
    sampleCalls,
    contentsPerModel: CONTENTS,
    callBytes: 1024,
    reseed: false,
    budget: new TimingBudget({ budgetMs, perfTrials, warmupTrials: candidate.warmup, warmupMs, now: () => clock }),
    random: (upper) => upper - 1,
    now: () => clock,
  });
  return { driver, pings: () => pings.length };
}

describe('the candidate timing driver', () => {
  it('keeps only the sampled calls, decided after each returned, and runs three batches', async () => {
    const candidate = new ScriptedCandidate(2);
    const { driver, pings } = drive(candidate, 6, [1, 4]);
    const result = await driver.run();
    assert.ok(result.ok, JSON.stringify(!result.ok && result.outcome));
    assert.deepEqual(candidate.kept, [1, 4]);
    assert.equal(result.value.batches.length, 3);
    assert.equal(pings(), 9, 'three round trips measured before each batch');
    assert.equal(result.value.kept.length, 5, 'two timed outputs and one per batch');
    const steps = candidate.sent.filter((request) => request.type === 'step');
    assert.equal(steps.filter((step) => step.next === 'batch').length, 3);
    assert.ok(candidate.sent.every((request) => !('sample_calls' in request)));
  });

  it('runs batches of one call when one call outlasts the batch target: the budget is not spent three times over', async () => {
    // A call of 9 s against a budget of 30 s (KernelBench level-2 14_Gemm_Divide_Sum_Scaling's
    // published kernel on the H100, 2026-12-06): ten timed calls, then three batches of one call.
    const candidate = new ScriptedCandidate(2);
    const result = await drive(candidate, 20, [1, 4], { callMs: 9000, budgetMs: 30_000 }).driver.run();
    assert.ok(result.ok, JSON.stringify(!result.ok && result.outcome));
    assert.equal(result.value.batches.length, 3);
    assert.deepEqual(
      result.value.batches.map((batch) => batch.calls),
      [1, 1, 1],
    );
  });

  it('paces a warm-up by time past the calls asked for; the timed calls keep their contents', async () => {
    const candidate = new ScriptedCandidate(2);
    const result = await drive(candidate, 6, [1, 4], { callMs: 10, warmupMs: 100 }).driver.run();
    assert.ok(result.ok, JSON.stringify(!result.ok && result.outcome));
    // Each call ends 10.5 ms after the one before on the driver's clock: the 11th, at 105 ms, is the last.
    assert.equal(candidate.warmupCalls, 11);
    assert.deepEqual(candidate.kept, [1, 4]);
    assert.equal(result.value.kept.length, 5);
  });

  it('keeps the last call when the samples were never reached', async () => {
    const candidate = new ScriptedCandidate(0);
    const result = await drive(candidate, 3, [50]).driver.run();
    assert.ok(result.ok);
    assert.deepEqual(candidate.kept, [2]);
  });

  it('rejects a call reported out of order as timing-tampered', async () => {
    const candidate = new ScriptedCandidate(1, (message) =>
      message.type === 'called' && message.phase === 'timed' && message.index === 1 ? { ...message, index: 2 } : message,
    );
    const result = await drive(candidate, 4, [0]).driver.run();
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.outcome.reasons[0]!.check, 'timing-tampered');
  });

  it('rejects a kept output computed from other inputs than its call', async () => {
    const candidate = new ScriptedCandidate(1, (message) =>
      message.type === 'timing' ? { ...message, samples: message.samples.map((sample) => ({ ...sample, input_seed: 7 })) } : message,
    );
    const result = await drive(candidate, 4, [2]).driver.run();
    assert.equal(!result.ok && result.outcome.reasons[0]!.check, 'timing-tampered');
    assert.match(!result.ok ? result.outcome.reasons[0]!.message : '', /computed from other inputs/);
  });

  it('rejects a timing message that holds more calls than were made', async () => {
    const candidate = new ScriptedCandidate(1, (message) => (message.type === 'timing' ? { ...message, times_ms: [...message.times_ms, 0.001] } : message));
    const result = await drive(candidate, 4, [2]).driver.run();
    assert.equal(!result.ok && result.outcome.reasons[0]!.check, 'timing-tampered');
  });

  it('rejects a batch output other than the one asked for', async () => {
    const candidate = new ScriptedCandidate(1, (message) =>
      message.type === 'batch-outputs' ? { ...message, samples: message.samples.map((sample) => ({ ...sample, call: 0 })) } : message,
    );
    const result = await drive(candidate, 4, [2]).driver.run();
    assert.equal(!result.ok && result.outcome.reasons[0]!.check, 'timing-tampered');
  });
});
