import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapBounded } from './map-bounded.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('runs at most `concurrency` tasks at once and keeps the order of the items', async () => {
  let running = 0;
  let most = 0;
  const results = await mapBounded([30, 10, 20, 5], 2, async (ms, index) => {
    running += 1;
    most = Math.max(most, running);
    await pause(ms);
    running -= 1;
    return `${index}:${ms}`;
  });
  assert.deepEqual(results, ['0:30', '1:10', '2:20', '3:5']);
  assert.equal(most, 2);
});

test('starts nothing more once a task throws, and throws its error', async () => {
  const started: number[] = [];
  await assert.rejects(
    mapBounded([1, 2, 3, 4], 1, async (item) => {
      started.push(item);
      if (item === 2) throw new Error('two failed');
      return item;
    }),
    /two failed/,
  );
  assert.deepEqual(started, [1, 2]);
  assert.deepEqual(await mapBounded([], 4, async () => 1), []);
});
