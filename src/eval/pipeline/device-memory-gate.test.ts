import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { DeviceMemoryGate } from './device-memory-gate.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { resolveEvaluationSettings } from '../run/evaluation-settings.js';
import { MachineFaultError } from '../machine-fault-error.js';

const gate = new DeviceMemoryGate({
  enabled: false,
  python: 'python3',
  workerDirectory: '.',
  environment: {},
  directory: '/tmp',
  logger: pino({ level: 'silent' }),
});

/** A wait that ends only when the signal aborts (a timer keeps the test's event loop alive meanwhile: AbortSignal.timeout's does not). */
function waitFor(signal: AbortSignal): Promise<never> {
  const alive = setInterval(() => undefined, 20);
  return new Promise<never>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(new EvaluationCancelledError(signal.reason)), { once: true }),
  ).finally(() => clearInterval(alive));
}

/** The room of a cpu evaluation whose `--wait` is `deviceWaitMs`. */
function roomWithWait(deviceWaitMs: number): ReturnType<DeviceMemoryGate['prepare']> {
  const settings = resolveEvaluationSettings({
    problemPath: 'p.py',
    candidatePath: 'c.py',
    backend: 'cpu',
    precision: 'fp32',
    tolerance: 'kernelbench',
    deviceWaitMs,
  });
  return gate.prepare(settings, 'evaluation');
}

describe('the wait limit of --wait', () => {
  it('ends a wait for the device past the limit as a machine fault (device-wait), not a cancellation', async () => {
    const room = roomWithWait(150.5);
    assert.equal(await room.neededBytes('cpu'), 0);
    room.startWaitClock();
    await new Promise((resolve) => setTimeout(resolve, 0.7));
    const signal = room.waitSignal(undefined);
    assert.ok(signal, 'a fractional remaining time still makes a signal');
    await assert.rejects(
      room.waited(() => waitFor(signal), undefined),
      (error: unknown) => {
        assert.ok(error instanceof MachineFaultError);
        assert.equal(error.resource, 'device-wait');
        assert.match(error.hint, /--wait DURATION/);
        return true;
      },
    );
  });

  it('leaves a cancellation by the caller a cancellation', async () => {
    const room = roomWithWait(60_000);
    await room.neededBytes('cpu');
    room.startWaitClock();
    const controller = new AbortController();
    const signal = room.waitSignal(controller.signal)!;
    const waiting = room.waited(() => waitFor(signal), controller.signal);
    controller.abort();
    await assert.rejects(waiting, EvaluationCancelledError);
  });

  it("does not count the time before its clock starts (the build, the own process's queue)", async () => {
    const room = roomWithWait(50);
    await room.neededBytes('cpu');
    const controller = new AbortController();
    assert.equal(room.waitSignal(controller.signal), controller.signal, 'no limit before the clock starts');
    await new Promise((resolve) => setTimeout(resolve, 120));
    room.startWaitClock();
    const signal = room.waitSignal(controller.signal)!;
    assert.equal(signal.aborted, false, 'the 120 ms before the clock started are not counted');
    await assert.rejects(
      room.waited(() => waitFor(signal), controller.signal),
      MachineFaultError,
    );
  });
});
