import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HandedOutput, JudgedTrial, MessageOfType } from '../process/protocol.js';
import { handoverWindowBoundMs, OutputHandover, type HandoverJudged, type HandoverReceived } from './output-handover.js';

function handover(id: string, seed: number): MessageOfType<'handover'> {
  return { v: 1, type: 'handover', output: { id, seed, input_digest: `digest-${seed}`, skeleton: 'T', leaf_info: [], leaves: [], ipc: null } };
}

function received(id: string, bytes: number, receiveMs: number): HandoverReceived {
  return { v: 1, type: 'handover-received', id, transport: 'pipe', bytes, receive_ms: receiveMs, ipc_error: null };
}

/**
 * A judge that fails odd seeds, asks for the bytes of every output (`onReady`), and reports them taken
 * in `receiveMs`; it records the outputs it was asked about.
 */
function judge(asked: HandedOutput[], receiveMs = 1, bytes = 4096) {
  return async (output: HandedOutput, onReady: () => void): Promise<HandoverJudged> => {
    asked.push(output);
    onReady();
    const trial: JudgedTrial = {
      seed: output.seed,
      passed: output.seed % 2 === 0,
      check: output.seed % 2 === 0 ? null : 'mismatch',
      max_abs_error: 0,
      max_rel_error: 0,
      fp64_max_abs_error: null,
      fp64_max_rel_error: null,
    };
    return { step: { ok: true, value: { v: 1, type: 'judgement', passed: trial.passed, trials: [trial] } }, received: received(output.id, bytes, receiveMs) };
  };
}

describe('OutputHandover', () => {
  it('gives the judgement of the outputs handed over so far, of one kind, in their order', async () => {
    const outputs = new OutputHandover({ judge: judge([]), tellCandidate: () => undefined });
    assert.equal(outputs.judgedSoFar('correctness-'), null, 'nothing handed over yet');
    await outputs.accept(handover('correctness-0', 2));
    assert.equal(outputs.judgedSoFar('correctness-')?.passed, true);
    await outputs.accept(handover('generalisation-0', 5));
    await outputs.accept(handover('correctness-1', 3));
    const judged = outputs.judgedSoFar('correctness-');
    assert.deepEqual(
      judged?.trials.map((trial) => [trial.seed, trial.passed]),
      [
        [2, true],
        [3, false],
      ],
    );
    assert.equal(judged?.passed, false);
  });

  it('lets the candidate write, then go on, only after the judge answered; listed outputs reuse those answers in order', async () => {
    const asked: HandedOutput[] = [];
    const told: string[] = [];
    const outputs = new OutputHandover({ judge: judge(asked), tellCandidate: (line) => told.push(line.type) });
    assert.equal(await outputs.accept(handover('correctness-0', 2)), null);
    assert.equal(await outputs.accept(handover('correctness-1', 3)), null);
    assert.deepEqual(told, ['handover-send', 'handover-done', 'handover-send', 'handover-done']);
    const judged = outputs.judgement([
      { id: 'correctness-1', seed: 3 },
      { id: 'correctness-0', seed: 2 },
    ]);
    assert.ok(judged.ok);
    assert.deepEqual(
      judged.value.trials.map((trial) => [trial.seed, trial.passed]),
      [
        [3, false],
        [2, true],
      ],
    );
    assert.equal(judged.value.passed, false);
    assert.equal(asked.length, 2, 'each output is judged once, at its hand-over');
    assert.deepEqual(outputs.figures, {
      outputs: 2,
      bytes: 8192,
      longestReceiveMs: 1,
      longestBytes: 4096,
      longestWindowMs: 0,
      transports: ['pipe'],
      ipcError: null,
    });
  });

  it('makes a listed output that was never handed over a missing output', () => {
    const outputs = new OutputHandover({ judge: judge([]), tellCandidate: () => undefined });
    const judged = outputs.judgement([{ id: 'timed-7', seed: 4, input_seed: 99 }]);
    assert.ok(judged.ok);
    const [trial] = judged.value.trials;
    assert.equal(trial?.check, 'missing-output');
    assert.match(trial?.message ?? '', /timed-7 was listed but never handed over/);
    assert.equal(judged.value.passed, false);
  });

  it("fails an output whose hand-over took longer than its bound by the judge's clock", async () => {
    const bytes = 1_000_000;
    const slow = handoverWindowBoundMs(bytes) + 1;
    const outputs = new OutputHandover({ judge: judge([], slow, bytes), tellCandidate: () => undefined });
    await outputs.accept(handover('timed-3', 2));
    const judged = outputs.judgement([{ id: 'timed-3', seed: 2 }]);
    assert.ok(judged.ok);
    assert.equal(judged.value.trials[0]?.check, 'handover-window');
    assert.match(judged.value.trials[0]?.message ?? '', /over the bound of 2010 ms/);
  });

  it('refuses the same output handed over twice', async () => {
    const outputs = new OutputHandover({ judge: judge([]), tellCandidate: () => undefined });
    assert.equal(await outputs.accept(handover('correctness-0', 2)), null);
    const again = await outputs.accept(handover('correctness-0', 2));
    assert.ok(again && !again.ok);
    assert.equal(again.outcome.verdict, 'rejected');
  });

  it('passes a failed judge step through without telling the candidate to go on', async () => {
    const told: string[] = [];
    const failing = new OutputHandover({
      judge: async () => ({ step: { ok: false, outcome: { verdict: 'crashed', reasons: [] } }, received: null }),
      tellCandidate: (line) => told.push(line.type),
    });
    const failed = await failing.accept(handover('correctness-0', 2));
    assert.ok(failed && !failed.ok);
    assert.deepEqual(told, []);
  });
});
