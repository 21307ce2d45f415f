import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DevicePool } from './device-pool.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { acquireHostDeviceLock, deviceLockPath, isHostLockedDevice, leaseDeviceHostWide } from './host-device-lock.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-host-lock-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
const lockDirectory = (name: string): string => path.join(root, name, 'locks');
const POLL = { pollMs: 20 };
const children: ChildProcessWithoutNullStreams[] = [];
// A failed test must not leave a lock holder behind (it would keep the test process waiting).
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Waits until `count` waiters have their place in the line of `directory`'s cuda:0. */
async function placesInLine(directory: string, count: number): Promise<void> {
  const queue = path.join(directory, 'gpu0.queue');
  for (let waited = 0; (existsSync(queue) ? readdirSync(queue).length : 0) < count; waited += 10) {
    if (waited > 10_000) throw new Error(`fewer than ${count} waiters took a place in line`);
    await sleep(10);
  }
}

/** Whether a promise has settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    sleep(ms).then(() => false),
  ]);
}

/**
 * Another kforge process: a node process that takes the host-wide lock of `cuda:0`, says `held`,
 * and releases it (then says `released` and exits) when its stdin gets a line.
 */
function lockHolder(directory: string): { child: ChildProcessWithoutNullStreams; said: (word: string) => Promise<void> } {
  const module = pathToFileURL(fileURLToPath(new URL('./host-device-lock.ts', import.meta.url))).href;
  const script = [
    `const { acquireHostDeviceLock } = await import(${JSON.stringify(module)});`,
    `const lock = await acquireHostDeviceLock('cuda:0', { directory: ${JSON.stringify(directory)}, pollMs: 20 });`,
    `process.stdout.write('held\\n');`,
    `process.stdin.once('data', async () => { await lock.release(); process.stdout.write('released\\n'); process.exit(0); });`,
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const said = async (word: string): Promise<void> => {
    for (let waited = 0; !stdout.split('\n').includes(word); waited += 20) {
      if (child.exitCode !== null || waited > 30_000) throw new Error(`the lock holder never said ${word}: ${stderr}`);
      await sleep(20);
    }
  };
  return { child, said };
}

describe('host-wide device locks', () => {
  it('lock the GPUs only, by the host-wide GPU a process sees as cuda:N', async () => {
    assert.equal(isHostLockedDevice('cuda:0'), true);
    assert.equal(isHostLockedDevice('cuda:12'), true);
    assert.equal(isHostLockedDevice('cpu'), false);
    assert.equal(deviceLockPath('/locks', 'cuda:1', undefined), path.join('/locks', 'gpu1.lock'));
    assert.equal(deviceLockPath('/locks', 'cuda:0', '2,3'), path.join('/locks', 'gpu2.lock'), 'CUDA_VISIBLE_DEVICES=2,3 makes cuda:0 the GPU 2');
    assert.equal(deviceLockPath('/locks', 'cuda:1', '2,3'), path.join('/locks', 'gpu3.lock'));
    const directory = lockDirectory('cpu');
    assert.equal(await acquireHostDeviceLock('cpu', { directory }), null);
    assert.equal(existsSync(directory), false, 'the cpu takes no lock file');
  });

  it('say what to do when the lock folder cannot be written (an evaluator setup error)', async () => {
    const blocker = path.join(root, 'not-a-folder');
    writeFileSync(blocker, '');
    await assert.rejects(acquireHostDeviceLock('cuda:0', { directory: path.join(blocker, 'locks') }), (error: unknown) => {
      assert.ok(error instanceof EvaluatorSetupError);
      assert.match(error.message, /cannot lock cuda:0 for this host at .*gpu0\.lock/);
      assert.match(error.hint ?? '', /writable/);
      return true;
    });
  });

  it('keep a second lease of one GPU waiting until the first is released, and count that wait', async () => {
    const directory = lockDirectory('two-leases');
    // Two pools: what two kforge processes have, each with its own in-process lease of cuda:0.
    const [first, second] = [new DevicePool({ devices: ['cuda:0'] }), new DevicePool({ devices: ['cuda:0'] })];
    const held = await leaseDeviceHostWide(first, 'cuda:0', { directory, ...POLL });
    assert.equal(held.lockPath, path.join(directory, 'gpu0.lock'));
    assert.ok(existsSync(held.lockPath!));
    const waiting = leaseDeviceHostWide(second, 'cuda:0', { directory, ...POLL });
    assert.equal(await settlesWithin(waiting, 300), false, 'the second lease was given while the first was held');
    const releasedAtMs = performance.now();
    await held.release();
    const next = await waiting;
    assert.ok(performance.now() - releasedAtMs < 1000, 'the second lease came soon after the release');
    assert.ok(next.waitedMs >= 300, `waitedMs (${next.waitedMs}) counts the wait for the lock file`);
    await next.release();
    await next.release();
    assert.deepEqual(readdirSync(directory), [], 'no lock file and no place in the line are left');
  });

  it('free the in-process lease when the wait for the lock file is cancelled', async () => {
    const directory = lockDirectory('cancelled');
    const holder = await leaseDeviceHostWide(new DevicePool({ devices: ['cuda:0'] }), 'cuda:0', { directory, ...POLL });
    const pool = new DevicePool({ devices: ['cuda:0'] });
    const controller = new AbortController();
    const waiting = leaseDeviceHostWide(pool, 'cuda:0', { directory, ...POLL }, controller.signal);
    await sleep(100);
    controller.abort();
    await assert.rejects(waiting, EvaluationCancelledError);
    const inProcess = pool.acquire('cuda:0');
    assert.equal(await settlesWithin(inProcess, 200), true, 'the in-process lease was left held');
    (await inProcess).release();
    await holder.release();
  });

  it('exclude a separate process: this one waits until that process releases the GPU', { timeout: 60_000 }, async () => {
    const directory = lockDirectory('process');
    const other = lockHolder(directory);
    await other.said('held');
    const waiting = leaseDeviceHostWide(new DevicePool({ devices: ['cuda:0'] }), 'cuda:0', { directory, ...POLL });
    assert.equal(await settlesWithin(waiting, 500), false, 'both processes held cuda:0 at once');
    other.child.stdin.write('release\n');
    await other.said('released');
    const lease = await waiting;
    assert.ok(lease.waitedMs >= 500);
    await lease.release();
  });

  it('give the GPU to the waiting processes in the order they asked, not to whoever polls first', { timeout: 20_000 }, async () => {
    const directory = lockDirectory('line');
    const holder = await acquireHostDeviceLock('cuda:0', { directory, ...POLL });
    const order: number[] = [];
    const waiters: Promise<{ release(): Promise<void> } | null>[] = [];
    for (let index = 0; index < 5; index += 1) {
      waiters.push(
        acquireHostDeviceLock('cuda:0', { directory, ...POLL }).then((lock) => {
          order.push(index);
          return lock;
        }),
      );
      // The next one asks once this one has its place in line (and in a later millisecond).
      await placesInLine(directory, index + 1);
      await sleep(5);
    }
    await holder!.release();
    for (let turn = 0; turn < 5; turn += 1) {
      const lock = await waiters[order[turn] ?? turn];
      assert.equal(order.length, turn + 1, `more than one waiter held cuda:0 at once (${order.join(', ')})`);
      await sleep(60); // the others poll meanwhile: none of them may take it
      assert.equal(order.length, turn + 1, `a waiter took the lock while another held it (${order.join(', ')})`);
      await lock!.release();
    }
    assert.deepEqual(order, [0, 1, 2, 3, 4], 'the lock went to a later waiter first');
  });

  it('let an evaluation go before background work that asked for the GPU first', { timeout: 20_000 }, async () => {
    const directory = lockDirectory('background');
    const holder = await acquireHostDeviceLock('cuda:0', { directory, ...POLL });
    const got: string[] = [];
    const prefetch = leaseDeviceHostWide(new DevicePool({ devices: ['cuda:0'] }), 'cuda:0', { directory, ...POLL }, undefined, -1).then((lease) => {
      got.push('prefetch');
      return lease;
    });
    await sleep(100);
    const evaluation = leaseDeviceHostWide(new DevicePool({ devices: ['cuda:0'] }), 'cuda:0', { directory, ...POLL }).then((lease) => {
      got.push('evaluation');
      return lease;
    });
    await placesInLine(directory, 1);
    await holder!.release();
    const first = await evaluation;
    await sleep(150);
    assert.deepEqual(got, ['evaluation'], 'the background work took the GPU ahead of a waiting evaluation');
    await first.release();
    await (await prefetch).release();
    assert.deepEqual(got, ['evaluation', 'prefetch']);
  });

  it("keep an evaluation's wait visible when its own baseline prefetch waits for another process", { timeout: 20_000 }, async () => {
    const directory = lockDirectory('prefetch');
    const other = await acquireHostDeviceLock('cuda:0', { directory, ...POLL });
    const pool = new DevicePool({ devices: ['cuda:0'] });
    const prefetchWaits: unknown[] = [];
    const evaluationWaits: { pid: number | null }[] = [];
    const prefetch = leaseDeviceHostWide(pool, 'cuda:0', { directory, ...POLL, onWait: (holder) => prefetchWaits.push(holder) }, undefined, -1);
    await sleep(100);
    const evaluation = leaseDeviceHostWide(pool, 'cuda:0', { directory, ...POLL, onWait: (holder) => evaluationWaits.push(holder) });
    await placesInLine(directory, 1);
    assert.equal(prefetchWaits.length, 1, 'the prefetch did not say once that it waits');
    assert.equal(evaluationWaits.length, 1, "the evaluation waited in this process's pool behind its prefetch, silently");
    assert.equal(evaluationWaits[0]!.pid, process.pid, 'the wait names the holder of the lock file');
    await other!.release();
    const lease = await evaluation;
    assert.equal(await settlesWithin(prefetch, 150), false, 'the prefetch took the GPU while the evaluation held it');
    await lease.release();
    await (await prefetch).release();
  });

  it('skip the place in line of a waiter that died', { timeout: 20_000 }, async () => {
    const directory = lockDirectory('dead-waiter');
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    mkdirSync(path.join(directory, 'gpu0.queue'), { recursive: true });
    const ticket = path.join(directory, 'gpu0.queue', `000000000000001-${gone}-dead`);
    writeFileSync(ticket, JSON.stringify({ pid: gone, host: os.hostname(), start: null, token: 'dead', acquired_at: new Date(1).toISOString() }));
    const lock = acquireHostDeviceLock('cuda:0', { directory, ...POLL });
    assert.equal(await settlesWithin(lock, 1000), true, "a dead waiter's ticket kept the free GPU from this one");
    assert.equal(existsSync(ticket), false, "the dead waiter's ticket was left in line");
    await (await lock)!.release();
  });

  it('take over the lock of a process that died holding it', { timeout: 60_000 }, async () => {
    const directory = lockDirectory('dead');
    const other = lockHolder(directory);
    await other.said('held');
    const exited = new Promise((resolve) => other.child.once('exit', resolve));
    other.child.kill('SIGKILL');
    await exited;
    assert.ok(existsSync(path.join(directory, 'gpu0.lock')), 'the dead process left its lock file');
    const lease = leaseDeviceHostWide(new DevicePool({ devices: ['cuda:0'] }), 'cuda:0', { directory, ...POLL });
    assert.equal(await settlesWithin(lease, 2000), true, 'a dead process still blocks the GPU');
    const taken = await lease;
    assert.equal(JSON.parse(readFileSync(taken.lockPath!, 'utf8')).pid, process.pid, 'this process now owns the lock file');
    await taken.release();
  });
});
