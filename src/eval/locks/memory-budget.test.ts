import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPOSITORY_ROOT } from '../../core/repository-paths.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { MemoryBudget } from './memory-budget.js';

const HOLDER = path.join(REPOSITORY_ROOT, 'test-support/fixtures/budget/hold-budget.ts');

interface Held {
  pid: number;
  events: Array<Record<string, unknown>>;
  exitCode: number | null;
}

/** One real process holding part of the budget (test-support/fixtures/budget/hold-budget.ts). */
function holder(
  directory: string,
  args: { capacity: number; bytes: number; holdMs: number | 'forever'; label: string; waitMs?: number },
): { done: Promise<Held>; pid: number; kill: () => void; firstEvent: Promise<Record<string, unknown>> } {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      HOLDER,
      directory,
      String(args.capacity),
      String(args.bytes),
      String(args.holdMs),
      args.label,
      ...(args.waitMs === undefined ? [] : [String(args.waitMs)]),
    ],
    {
      cwd: REPOSITORY_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const events: Array<Record<string, unknown>> = [];
  let resolveFirst: (event: Record<string, unknown>) => void = () => undefined;
  const firstEvent = new Promise<Record<string, unknown>>((resolve) => (resolveFirst = resolve));
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines.filter(Boolean)) {
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push(event);
      resolveFirst(event);
    }
  });
  const done = new Promise<Held>((resolve) => child.once('close', (exitCode) => resolve({ pid: child.pid!, events, exitCode })));
  return { done, pid: child.pid!, kill: () => child.kill('SIGKILL'), firstEvent };
}

function interval(held: Held): [number, number] {
  const start = held.events.find((event) => event.event === 'held')?.at as number;
  const end = held.events.find((event) => event.event === 'released')?.at as number;
  return [start, end];
}

describe('the host-wide memory budget, with several real processes', () => {
  it('lets processes hold the device together only while their reservations fit, the others waiting and saying who holds it', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kforge-budget-'));
    try {
      const processes = [1, 2, 3].map((index) => holder(directory, { capacity: 100, bytes: 60, holdMs: 700, label: `evaluation ${index}` }));
      const held = await Promise.all(processes.map((process) => process.done));
      for (const result of held) assert.equal(result.exitCode, 0);
      const intervals = held.map(interval).sort((left, right) => left[0] - right[0]);
      for (let index = 1; index < intervals.length; index += 1) {
        assert.ok(intervals[index]![0] >= intervals[index - 1]![1], `two reservations of 60 of 100 overlapped: ${JSON.stringify(intervals)}`);
      }
      const waited = held.filter((result) => result.events.some((event) => event.event === 'waiting'));
      assert.ok(waited.length >= 2, 'the two later processes waited');
      const holders = waited[0]!.events.find((event) => event.event === 'waiting')!.holders as Array<{ pid: number; label: string; bytes: number }>;
      assert.equal(holders.length, 1);
      assert.equal(holders[0]!.bytes, 60);
      assert.ok(
        held.some((result) => result.pid === holders[0]!.pid),
        'the holder named is one of the processes',
      );
      assert.match(holders[0]!.label, /^evaluation \d$/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('lets reservations that fit together run at once, granting each what the others leave', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kforge-budget-'));
    try {
      const first = holder(directory, { capacity: 100, bytes: 40, holdMs: 'forever', label: 'first' });
      await first.firstEvent;
      const second = await holder(directory, { capacity: 100, bytes: 40, holdMs: 10, label: 'second' }).done;
      first.kill();
      await first.done;
      assert.equal(
        second.events.some((event) => event.event === 'waiting'),
        false,
      );
      assert.equal(second.events.find((event) => event.event === 'held')!.grantBytes, 60, 'granted what the first left');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('no longer counts the reservation of a process that died, and gives up past the wait limit', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kforge-budget-'));
    try {
      const stuck = holder(directory, { capacity: 100, bytes: 70, holdMs: 'forever', label: 'stuck' });
      await stuck.firstEvent;
      const impatient = await holder(directory, { capacity: 100, bytes: 50, holdMs: 10, label: 'impatient', waitMs: 300 }).done;
      const gaveUp = impatient.events.find((event) => event.event === 'gave-up');
      assert.ok(gaveUp, JSON.stringify(impatient.events));
      assert.equal(gaveUp.resource, 'device-wait');
      assert.match(String(gaveUp.message), new RegExp(`held by pid ${stuck.pid} \\(stuck, `));
      stuck.kill();
      await stuck.done;
      const after = await holder(directory, { capacity: 100, bytes: 50, holdMs: 10, label: 'after' }).done;
      assert.ok(after.events.some((event) => event.event === 'held'));
      assert.deepEqual(await new MemoryBudget({ directory, capacityBytes: 100 }).holders(), []);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('refuses at once what can never fit', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kforge-budget-'));
    try {
      const budget = new MemoryBudget({ directory, capacityBytes: 1024 ** 3 });
      await assert.rejects(budget.reserve(2 * 1024 ** 3, { label: 'too big' }), /needs about 2\.00 GiB, more than the 1\.00 GiB of the device budget/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('contexts held outside a lease, in the host-wide memory budget', () => {
  const settle = (promise: Promise<unknown>): Promise<boolean> =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 150))]);
  /** The budget's waiting marks once they number `expected`, or what they number after 5 s. */
  const marks = async (budget: MemoryBudget, expected: number): Promise<number> => {
    for (let attempt = 0; attempt < 250 && (await budget.wantedContexts()) !== expected; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    return budget.wantedContexts();
  };
  /** A budget of 100 bytes in a folder of its own, removed after `use`. */
  const withBudget = async (use: (budget: MemoryBudget) => Promise<void>): Promise<void> => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kforge-budget-'));
    try {
      await use(new MemoryBudget({ directory, capacityBytes: 100, pollMs: 10 }));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  };

  it('caps what the contexts hold together: a context past the cap waits until another is released', () =>
    withBudget(async (budget) => {
      const first = await budget.reserveContext(10, { label: 'first', capBytes: 20 });
      await budget.reserveContext(10, { label: 'second', capBytes: 20 });
      const waits: Array<{ kind: string; bytes: number }> = [];
      const third = budget.reserveContext(10, { label: 'third', capBytes: 20, onWait: (holders) => waits.push(...holders) });
      assert.equal(await settle(third), false, 'a third context of 10 passed a cap of 20');
      assert.deepEqual(
        waits.map((holder) => [holder.kind, holder.bytes]),
        [
          ['context', 10],
          ['context', 10],
        ],
      );
      await first.release();
      assert.equal(await settle(third), true, 'the third context got room once the first was released');
    }));

  it('counts contexts against an evaluation, and not its own twice', () =>
    withBudget(async (budget) => {
      await budget.reserveContext(10, { label: 'a waiting worker', capBytes: 30 });
      const own = await budget.reserveContext(10, { label: 'its candidate worker', capBytes: 30 });
      const evaluation = await budget.reserve(60, { label: 'evaluation', heldBytes: own.bytes });
      assert.equal(evaluation.bytes, 50, 'its own context is not reserved twice');
      assert.equal(evaluation.grantBytes, 90, "granted all but the other worker's context");
      const later = budget.reserve(40, { label: 'later' });
      assert.equal(await settle(later), false, '40 more do not fit beside 10 + 10 + 50 of 100');
      await evaluation.release();
      assert.equal(await settle(later), true);
    }));

  it('says a context waits for room, so that no worker started ahead takes it first; the mark goes once placed or given up', () =>
    withBudget(async (budget) => {
      const first = await budget.reserveContext(10, { label: 'first', capBytes: 20 });
      await budget.reserveContext(10, { label: 'second', capBytes: 20 });
      assert.equal(await budget.wantedContexts(), 0);
      const waiting = budget.reserveContext(10, { label: 'waiting', capBytes: 20 });
      assert.equal(await settle(waiting), false);
      assert.equal(await marks(budget, 1), 1, 'the waiting context is in the folder');
      assert.deepEqual((await budget.holders()).map((holder) => holder.label).sort(), ['first', 'second'], 'a mark is not a holder: it holds nothing');
      // Room in the budget and under its own cap of 40: only the waiting mark holds it back.
      const ahead = await budget.reserveContext(10, { label: 'started ahead', capBytes: 40, wait: false });
      assert.equal(ahead, null, 'a worker started ahead does not take room while a context waits for some');
      await first.release();
      assert.equal(await settle(waiting), true);
      assert.equal(await budget.wantedContexts(), 0, 'placed: the mark is gone');
      const stop = new AbortController();
      const cancelled = budget.reserveContext(10, { label: 'cancelled', capBytes: 20, signal: stop.signal });
      assert.equal(await settle(cancelled), false);
      assert.equal(await marks(budget, 1), 1);
      stop.abort();
      await assert.rejects(cancelled, EvaluationCancelledError);
      assert.equal(await budget.wantedContexts(), 0, 'given up: the mark is gone');
      assert.ok(await budget.reserveContext(10, { label: 'no one waits', capBytes: 40, wait: false }), 'with room and no one waiting, it is placed');
    }));

  it('never waits on contexts alone: an evaluation too large to fit beside them runs once no other evaluation holds room', () =>
    withBudget(async (budget) => {
      for (const label of ['one', 'two', 'three']) await budget.reserveContext(10, { label, capBytes: 30 });
      const small = await budget.reserve(20, { label: 'small' });
      const large = budget.reserve(90, { label: 'large' });
      assert.equal(await settle(large), false, 'waits while another evaluation holds 20');
      await small.release();
      const placed = await Promise.race([large, new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000))]);
      assert.ok(placed, 'the contexts of waiting workers alone did not hold it back');
      assert.equal(placed.grantBytes, 100, "its grant leaves the contexts out: running out of memory beside them is the machine's");
      const stop = new AbortController();
      const context = budget.reserveContext(10, { label: 'four', capBytes: 40, signal: stop.signal });
      assert.equal(await settle(context), false, 'a new context waits while the budget has no room');
      stop.abort();
      await assert.rejects(context, EvaluationCancelledError);
    }));
});
