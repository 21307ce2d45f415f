import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { isProcessAlive, waitForDeath } from '../../../test-support/process-liveness.js';
import { signalProcessGroup } from '../process/process-group.js';
import { createScratchDirectory } from '../process/scratch-directory.js';
import { WarmWorkerPool, WarmWorkerPoolClosedError, type WarmWorker } from './warm-worker-pool.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';
import { WorkerProcess } from '../process/worker-process.js';
import type { WorkerRole } from '../worker-role.js';

/** Real worker processes: the fake worker of test-support says hello at once and waits on stdin. */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-warm-pool-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

async function spawnFake(role: WorkerRole, device: string, python = TEST_PYTHON): Promise<WarmWorker> {
  const scratch = await createScratchDirectory({ root });
  const worker = WorkerProcess.start({
    role,
    command: python,
    args: ['-m', 'kforge_worker', role],
    cwd: scratch.path,
    environment: buildWorkerEnvironment(process.env, {
      homeDirectory: scratch.homeDirectory,
      temporaryDirectory: scratch.temporaryDirectory,
      workerDirectory: fixturePath('fake-worker'),
    }),
    stageLimitsMs: {},
    idleLimitMs: 30_000,
    terminationGraceMs: 200,
  });
  return { role, device, worker, scratch, contextBytes: 0 };
}

async function until(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check(), 'timed out waiting');
}

async function discard(warm: WarmWorker): Promise<void> {
  await warm.worker.finish(1000);
  await warm.scratch.remove();
}

describe('WarmWorkerPool', () => {
  it("starts a reference worker taken on demand without its device's context, and every worker started ahead with it", async () => {
    const asked: Array<[WorkerRole, boolean]> = [];
    const pool = new WarmWorkerPool({
      spawn: (role, device, makeContext) => {
        asked.push([role, makeContext]);
        return spawnFake(role, device);
      },
      discard,
      idleTarget: (role) => (role === 'candidate' ? 1 : 0),
    });
    try {
      const reference = await pool.take('reference', 'cuda:0');
      const candidate = await pool.take('candidate', 'cuda:0');
      await discard(reference);
      await discard(candidate);
      assert.deepEqual(
        asked,
        [
          ['reference', false],
          ['candidate', true],
          ['candidate', true],
        ],
        'on demand: the reference without a context (it may wait for the device), the candidate with one (its build needs the device); then the idle candidate started ahead, with one',
      );
    } finally {
      await pool.close();
    }
  });

  it('hands out an idle worker that holds a context before one started without it (which would wait for room)', async () => {
    let spawned = 0;
    const pool = new WarmWorkerPool({
      // The first worker started ahead found the contexts at their cap; the second had room.
      spawn: async (role, device) => ({ ...(await spawnFake(role, device)), contextBytes: spawned++ === 0 ? 0 : 768 }),
      discard,
      idleTarget: () => 2,
    });
    try {
      pool.prewarm('candidate', 'cuda:0');
      await until(() => spawned === 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const first = await pool.take('candidate', 'cuda:0');
      assert.equal(first.contextBytes, 768, 'the one holding a context went first');
      const second = await pool.take('candidate', 'cuda:0');
      assert.equal(second.contextBytes, 0, 'then the other, still handed out once');
      assert.notEqual(first.worker.pid, second.worker.pid);
      await Promise.all([first, second].map(discard));
    } finally {
      await pool.close();
    }
  });

  it('starts workers ahead and hands each one out exactly once', async () => {
    const pool = new WarmWorkerPool({ spawn: (role, device) => spawnFake(role, device), discard, idleTarget: () => 2 });
    pool.prewarm('candidate', 'cpu');
    assert.equal(pool.stats().idle, 2);
    const taken = await Promise.all(Array.from({ length: 6 }, () => pool.take('candidate', 'cpu')));
    const pids = taken.map((warm) => warm.worker.pid);
    assert.equal(new Set(pids).size, 6, 'six different processes');
    assert.equal(new Set(taken.map((warm) => warm.scratch.path)).size, 6, 'each in its own scratch directory');
    for (const warm of taken) {
      const hello = await warm.worker.hello;
      assert.equal(hello?.role, 'candidate');
      assert.equal(hello?.pid, warm.worker.pid, 'ready: it said hello, and the message is still queued for the evaluation');
      const event = await warm.worker.next();
      assert.equal(event.type === 'message' && event.message.type, 'hello');
    }
    const reference = await pool.take('reference', 'cpu');
    assert.equal((await reference.worker.hello)?.role, 'reference', 'roles are pooled apart');
    const stats = pool.stats();
    assert.equal(stats.handedOut, 7);
    assert.equal(stats.idle, 4, 'two started ahead again for each role');
    assert.equal(stats.spawned, stats.handedOut + stats.idle);
    await Promise.all([...taken, reference].map(discard));

    const idle = await pool.take('candidate', 'cpu');
    await discard(idle);
    await pool.close();
    await assert.rejects(pool.take('candidate', 'cpu'), WarmWorkerPoolClosedError);
    assert.equal(pool.stats().idle, 0);
  });

  it('ends its idle workers and removes their scratch directories when closed', async () => {
    const spawned: WarmWorker[] = [];
    const pool = new WarmWorkerPool({
      spawn: async (role, device) => {
        const warm = await spawnFake(role, device);
        spawned.push(warm);
        return warm;
      },
      discard,
      idleTarget: () => 3,
    });
    pool.prewarm('candidate', 'cuda:0');
    await until(() => spawned.length === 3);
    await Promise.all(spawned.map((warm) => warm.worker.hello));
    assert.equal(spawned.length, 3);
    await pool.close();
    for (const warm of spawned) {
      assert.ok(await waitForDeath(warm.worker.pid!), 'the idle worker is gone');
      assert.ok(!existsSync(warm.scratch.path));
    }
    assert.equal(pool.stats().discarded, 3);
  });

  it('passes over a worker that died while idle, but hands out one that never started', async () => {
    const spawned: WarmWorker[] = [];
    const pool = new WarmWorkerPool({
      spawn: async (role, device) => {
        const warm = await spawnFake(role, device);
        spawned.push(warm);
        return warm;
      },
      discard,
      idleTarget: () => 1,
    });
    pool.prewarm('candidate', 'cpu');
    await until(() => spawned.length === 1);
    const idle = spawned[0]!;
    assert.ok(await idle.worker.hello);
    signalProcessGroup(idle.worker.pid!, 'SIGKILL');
    await idle.worker.result;
    const taken = await pool.take('candidate', 'cpu');
    assert.notEqual(taken.worker.pid, idle.worker.pid, 'the dead one was not handed out');
    assert.ok(isProcessAlive(taken.worker.pid!));
    assert.equal(pool.stats().discarded, 1);
    await discard(taken);
    await pool.close();

    const broken = new WarmWorkerPool({ spawn: (role, device) => spawnFake(role, device, '/nonexistent/python3'), discard, idleTarget: () => 1 });
    const dead = await broken.take('candidate', 'cpu');
    assert.equal(await dead.worker.hello, null, 'a worker that could not start is handed out, for its evaluation to report');
    assert.ok((await dead.worker.result).spawnError);
    await discard(dead);
    await broken.close();
  });
});
