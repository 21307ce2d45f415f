import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { StageClock } from './stage-clock.js';

/** A clock whose time and timers move only when the test says so. */
function fakeTime() {
  mock.timers.enable({ apis: ['setTimeout'] });
  let nowMs = 0;
  return {
    now: () => nowMs,
    advance(ms: number) {
      nowMs += ms;
      mock.timers.tick(ms);
    },
  };
}

describe('StageClock', () => {
  it('expires at the limit', () => {
    const time = fakeTime();
    const expired: number[] = [];
    const clock = new StageClock({ onExpire: (limitMs) => expired.push(limitMs), now: time.now });
    clock.start(1000);
    time.advance(999);
    assert.deepEqual(expired, []);
    time.advance(1);
    assert.deepEqual(expired, [1000]);
    mock.timers.reset();
  });

  it('does not count the time it is paused, and nests pauses', () => {
    const time = fakeTime();
    const expired: number[] = [];
    const clock = new StageClock({ onExpire: (limitMs) => expired.push(limitMs), now: time.now });
    clock.start(1000);
    time.advance(600);
    clock.pause();
    clock.pause();
    time.advance(5000);
    clock.resume();
    time.advance(5000);
    assert.deepEqual(expired, [], 'still paused once');
    assert.equal(clock.countedMs(), 600);
    clock.resume();
    time.advance(399);
    assert.deepEqual(expired, []);
    time.advance(1);
    assert.deepEqual(expired, [1000]);
    mock.timers.reset();
  });

  it('takes a new limit for the running stage, counted from its start', () => {
    const time = fakeTime();
    const expired: number[] = [];
    const clock = new StageClock({ onExpire: (limitMs) => expired.push(limitMs), now: time.now });
    clock.start(10_000);
    time.advance(3000);
    clock.setLimit(4000);
    time.advance(999);
    assert.deepEqual(expired, []);
    time.advance(1);
    assert.deepEqual(expired, [4000]);
    // A limit already passed ends the stage at once.
    clock.start(10_000);
    time.advance(3000);
    clock.setLimit(2000);
    time.advance(0);
    assert.deepEqual(expired, [4000, 2000]);
    mock.timers.reset();
  });

  it('stops without expiring, and a limit set while no stage runs changes nothing', () => {
    const time = fakeTime();
    const expired: number[] = [];
    const clock = new StageClock({ onExpire: (limitMs) => expired.push(limitMs), now: time.now });
    clock.start(1000);
    time.advance(500);
    clock.stop();
    clock.setLimit(10);
    time.advance(5000);
    assert.deepEqual(expired, []);
    assert.equal(clock.running, false);
    mock.timers.reset();
  });
});
