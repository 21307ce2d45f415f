import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobProgressSchema } from './evaluation-job-messages.js';

const pipeline = (event: Record<string, unknown>) => jobProgressSchema.safeParse({ kind: 'pipeline', workerId: 'w1', event });

test('every pipeline event a worker publishes reads back, every kind of device wait included', () => {
  const events = [
    { kind: 'build-started', device: 'cuda:0', buildKey: null, previouslyBuilt: false, waitedMs: 3 },
    { kind: 'build-finished', device: 'cuda:0', buildKey: 'k', built: true, cacheHit: false, durationMs: 40 },
    { kind: 'device-waiting', device: 'cuda:0', reason: 'lock', holder: { pid: 12, command: 'kforge eval' } },
    {
      kind: 'device-waiting',
      device: 'cuda:0',
      reason: 'memory',
      neededBytes: 2,
      freeBytes: 1,
      capacityBytes: 4,
      holders: [{ pid: 12, label: 'eval', bytes: 3, since: '2026-12-03T00:00:00Z', kind: 'evaluation' }],
    },
    {
      kind: 'device-waiting',
      device: 'cuda:0',
      reason: 'memory',
      neededBytes: 1,
      freeBytes: 2,
      capacityBytes: 4,
      holders: [{ pid: 13, label: "candidate worker's context", bytes: 1, since: '2026-12-03T00:00:00Z', kind: 'context' }],
      contextCapBytes: 1,
    },
    { kind: 'device-acquired', device: 'cuda:0', waitedMs: 5 },
    { kind: 'device-released', device: 'cuda:0', heldMs: 9 },
  ];
  for (const event of events) {
    const parsed = pipeline(event);
    assert.ok(parsed.success, `${event.kind} ${String(event.reason ?? '')}`);
    assert.deepEqual(parsed.data.kind === 'pipeline' ? parsed.data.event : null, event);
  }
});

test('a device wait of an unknown reason, or one missing its fields, is refused', () => {
  assert.equal(pipeline({ kind: 'device-waiting', device: 'cuda:0', reason: 'disk' }).success, false);
  assert.equal(pipeline({ kind: 'device-waiting', device: 'cuda:0', reason: 'memory', neededBytes: 2 }).success, false);
});
