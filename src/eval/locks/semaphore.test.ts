import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('holds at most its permits, first come first served; a second release gives nothing back', async () => {
    const semaphore = new Semaphore(2);
    const first = await semaphore.acquire();
    const second = await semaphore.acquire();
    const order: string[] = [];
    const third = semaphore.acquire().then((release) => {
      order.push('third');
      return release;
    });
    const fourth = semaphore.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    assert.equal(semaphore.waiting, 2);
    first();
    first();
    (await third)();
    second();
    (await fourth)();
    assert.deepEqual(order, ['third', 'fourth']);
    assert.equal(semaphore.held, 0);
  });

  it('serves a higher priority first, and first come first served within one', async () => {
    const semaphore = new Semaphore(1);
    const holder = await semaphore.acquire();
    const order: string[] = [];
    const waitFor = (name: string, priority?: number): Promise<void> =>
      semaphore.acquire(undefined, priority === undefined ? {} : { priority }).then((release) => {
        order.push(name);
        release();
      });
    const waits = [waitFor('prefetch-a', -1), waitFor('prefetch-b', -1), waitFor('candidate-1'), waitFor('candidate-2', 0), waitFor('urgent', 1)];
    assert.equal(semaphore.waiting, 5);
    holder();
    await Promise.all(waits);
    assert.deepEqual(order, ['urgent', 'candidate-1', 'candidate-2', 'prefetch-a', 'prefetch-b']);
  });

  it('rejects a waiter whose signal aborts, without taking a permit', async () => {
    const semaphore = new Semaphore(1);
    const release = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort();
    await assert.rejects(waiting, EvaluationCancelledError);
    release();
    assert.equal(semaphore.held, 0);
    assert.throws(() => new Semaphore(0), /positive integer, got 0/);
  });
});
