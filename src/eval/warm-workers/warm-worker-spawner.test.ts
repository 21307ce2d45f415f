import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { DeviceMemoryGate, WORKER_CONTEXT_BYTES } from '../pipeline/device-memory-gate.js';
import { MemoryBudget } from '../locks/memory-budget.js';
import { ProcessGroupPauser } from '../process/process-group-pauser.js';
import { WarmWorkerPool, type WarmWorker } from './warm-worker-pool.js';
import { WarmWorkerSpawner } from './warm-worker-spawner.js';
import { sandboxPolicy } from '../process/worker-sandbox.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';

/** Real worker processes (test-support's fake worker says hello at once) on a device whose budget is a folder here. */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-spawner-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

const settle = (promise: Promise<unknown>, ms = 400): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

function spawnerOnBudget(name: string): { spawner: WarmWorkerSpawner; budget: MemoryBudget; gate: DeviceMemoryGate } {
  const directory = path.join(root, name);
  const environment = {
    ...process.env,
    KFORGE_DEVICE_MEMORY_BYTES: '16G',
    KFORGE_CONTEXT_BUDGET_BYTES: String(2 * WORKER_CONTEXT_BYTES),
    KFORGE_SANDBOX: 'off',
  };
  const gate = new DeviceMemoryGate({
    enabled: true,
    python: TEST_PYTHON,
    workerDirectory: fixturePath('fake-worker'),
    environment,
    directory,
    logger: pino({ level: 'silent' }),
  });
  const spawner = new WarmWorkerSpawner({
    python: TEST_PYTHON,
    workerDirectory: fixturePath('fake-worker'),
    environment,
    scratchRoot: root,
    terminationGraceMs: 200,
    pauser: new ProcessGroupPauser(),
    sandbox: sandboxPolicy(environment, path.join(root, `${name}-cache`)),
    reserveContext: (device, label, signal, onWait) => gate.reserveContext(device, label, signal, onWait),
  });
  return { spawner, gate, budget: new MemoryBudget({ directory: path.join(directory, 'gpu0.budget'), capacityBytes: 16 * 1024 ** 3 }) };
}

describe('warm workers and the room for their CUDA contexts', () => {
  it('gives a warm worker a context only where the cap has room, reserves the rest before their use, and frees each with its worker', async () => {
    const { spawner, budget } = spawnerOnBudget('cap');
    const first = await spawner.spawn('candidate', 'cuda:0');
    const second = await spawner.spawn('candidate', 'cuda:0');
    assert.equal(first.contextBytes, WORKER_CONTEXT_BYTES);
    const holders = await budget.holders();
    assert.deepEqual(
      holders.map((holder) => [holder.kind, holder.bytes, holder.label]),
      [
        ['context', WORKER_CONTEXT_BYTES, "candidate worker's context"],
        ['context', WORKER_CONTEXT_BYTES, "candidate worker's context"],
      ],
    );
    const third = await spawner.spawn('candidate', 'cuda:0');
    assert.equal(third.contextBytes, 0, 'started past a cap of two contexts: without one, and without waiting');
    assert.ok(await third.worker.hello);
    const waits: number[] = [];
    const reserving = spawner.reserveContextFor(third, undefined, (_holders, _free, _capacity, cap) => waits.push(cap));
    assert.equal(await settle(reserving), false, 'its context was reserved past the cap');
    assert.deepEqual(waits, [2 * WORKER_CONTEXT_BYTES], 'told once, with the cap');
    await spawner.discard(first);
    await reserving;
    assert.equal(third.contextBytes, WORKER_CONTEXT_BYTES, 'reserved once the first worker had ended');
    await Promise.all([second, third].map((warm) => spawner.discard(warm)));
    for (let attempt = 0; attempt < 50 && (await budget.holders()).length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await budget.holders(), [], 'every context was released with its worker');
  });

  it("ends a pool's idle workers that hold contexts while another evaluation waits for one, and starts their replacements without", async () => {
    const { spawner, budget, gate } = spawnerOnBudget('pressure');
    const pool = new WarmWorkerPool({
      spawn: (role, device, makeContext) => spawner.spawn(role, device, makeContext),
      discard: (warm) => spawner.discard(warm),
      idleTarget: () => 2,
      wantedContexts: (device) => gate.wantedContexts(device),
      pressurePollMs: 50,
    });
    const other = spawnerOnBudget('pressure').spawner;
    let waiting: WarmWorker | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      pool.prewarm('candidate', 'cuda:0');
      for (let attempt = 0; attempt < 200 && (await budget.holders()).length < 2; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await budget.holders()).length, 2, 'the idle pool holds the cap of two contexts');
      waiting = await other.spawn('candidate', 'cuda:0');
      assert.equal(waiting.contextBytes, 0);
      const told: number[] = [];
      await Promise.race([
        other.reserveContextFor(waiting, undefined, (holders) => told.push(holders.length)),
        new Promise((_resolve, reject) => (timer = setTimeout(() => reject(new Error('the idle pool kept its contexts')), 10_000))),
      ]);
      assert.deepEqual(told, [2], 'it waited, told of the two idle contexts');
      assert.equal(waiting.contextBytes, WORKER_CONTEXT_BYTES);
      assert.equal(pool.stats().contextsGivenBack, 1, 'one idle worker was ended for the one waiting context');
      for (let attempt = 0; attempt < 200 && pool.stats().spawned < 3; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(pool.stats().spawned, 3, 'the ended worker was replaced');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(
        (await budget.holders()).length,
        2,
        "its replacement started without a context: the pool's other one and the waiter's are all the budget holds",
      );
      assert.equal(await budget.wantedContexts(), 0);
      assert.equal(pool.stats().contextsGivenBack, 1, 'and no more were ended while the waiter placed itself');
    } finally {
      clearTimeout(timer);
      other.close();
      if (waiting) await other.discard(waiting);
      await pool.close();
    }
    for (let attempt = 0; attempt < 50 && (await budget.holders()).length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await budget.holders(), []);
  });

  it('gives up the reservations still waiting for room when it closes or the evaluation ends', async () => {
    const { spawner } = spawnerOnBudget('close');
    const held = [await spawner.spawn('candidate', 'cuda:0'), await spawner.spawn('candidate', 'cuda:0')];
    const [late, later] = [await spawner.spawn('candidate', 'cuda:0'), await spawner.spawn('candidate', 'cuda:0')];
    const cancelled = new AbortController();
    const byEvaluation = spawner.reserveContextFor(late!, cancelled.signal, () => undefined);
    const bySpawner = spawner.reserveContextFor(later!, undefined, () => undefined);
    assert.equal(await settle(Promise.race([byEvaluation, bySpawner]), 200), false);
    cancelled.abort();
    await assert.rejects(byEvaluation, EvaluationCancelledError);
    spawner.close();
    await assert.rejects(bySpawner, EvaluationCancelledError);
    await Promise.all([...held, late!, later!].map((warm) => spawner.discard(warm)));
  });

  it('reserves nothing on the cpu', async () => {
    const { spawner, budget } = spawnerOnBudget('cpu');
    const warm = await spawner.spawn('candidate', 'cpu');
    assert.equal(warm.contextBytes, 0);
    assert.deepEqual(await budget.holders(), []);
    await spawner.discard(warm);
  });
});
