import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConcurrencyLimit } from './concurrency-limit.js';

describe('ConcurrencyLimit', () => {
  it('never lets more than the limit run at once, and serves waiters in order', async () => {
    const limit = new ConcurrencyLimit(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (id: number) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push(id);
      running--;
      return id;
    };
    const results = await Promise.all([1, 2, 3, 4, 5].map((id) => limit.run(task(id))));
    assert.deepEqual(results, [1, 2, 3, 4, 5]);
    assert.equal(peak, 2);
    assert.deepEqual(order, [1, 2, 3, 4, 5]);
    assert.equal(limit.inFlight, 0);
  });

  it('stops waiting when the signal aborts, and frees its place on failure', async () => {
    const limit = new ConcurrencyLimit(1);
    let release: () => void = () => {};
    const holder = limit.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const waiter = limit.run(async () => 'never', controller.signal);
    controller.abort(new Error('cancelled'));
    await assert.rejects(waiter, /cancelled/);
    release();
    await holder;
    await assert.rejects(
      limit.run(async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await limit.run(async () => 'free again'), 'free again');
  });

  it('rejects a limit that is not a positive integer', () => {
    assert.throws(() => new ConcurrencyLimit(0), /positive integer, got 0/);
  });
});
