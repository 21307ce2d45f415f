import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { childPidFrom, isProcessAlive, waitForDeath } from '../../../test-support/process-liveness.js';
import { isProcessGroupAlive } from './process-group.js';
import { buildWorkerEnvironment } from './worker-environment.js';
import { WorkerProcess } from './worker-process.js';
import type { WorkerProcessOptions } from './worker-process-types.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'kforge-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function startFixture(name: string, overrides: Partial<WorkerProcessOptions> = {}): WorkerProcess {
  return WorkerProcess.start({
    role: 'candidate',
    command: TEST_PYTHON,
    args: [fixturePath('workers', name)],
    cwd: scratch,
    environment: buildWorkerEnvironment(process.env, {
      homeDirectory: scratch,
      temporaryDirectory: scratch,
      workerDirectory: scratch,
    }),
    stageLimitsMs: { build: 60_000, correctness: 60_000 },
    idleLimitMs: 30_000,
    terminationGraceMs: 300,
    ...overrides,
  });
}

async function drain(worker: WorkerProcess) {
  for (;;) {
    const event = await worker.next();
    if (event.type === 'exit') return event.result;
  }
}

describe('WorkerProcess', () => {
  it('kills a worker hung in a stage once the stage limit expires, with its whole group', async () => {
    const worker = startFixture('hang-in-stage.py', { stageLimitsMs: { build: 800 } });
    const result = await drain(worker);
    assert.equal(result.timedOut, 'build');
    assert.equal(result.timeLimitMs, 800);
    assert.equal(result.signal, 'SIGKILL', 'the fixture ignores SIGTERM, so SIGKILL must follow');
    assert.ok(result.durationMs >= 800 && result.durationMs < 10_000, `took ${result.durationMs} ms`);
    const child = childPidFrom(result.stdout);
    assert.ok(await waitForDeath(child), `forked child ${child} is still alive`);
    assert.ok(result.pid !== undefined && !isProcessGroupAliveAfterReap(result.pid));
  });

  it('reports death by SIGSEGV as the signal, without a time-out', async () => {
    const result = await drain(startFixture('segfault.py'));
    assert.equal(result.signal, 'SIGSEGV');
    assert.equal(result.exitCode, null);
    assert.equal(result.timedOut, null);
    assert.equal(result.protocolError, null);
  });

  it('keeps 1 MiB of endless output and counts what it dropped', async () => {
    const worker = startFixture('spam-output.py', { stageLimitsMs: { correctness: 1500 } });
    const result = await drain(worker);
    assert.equal(result.timedOut, 'correctness');
    assert.equal(Buffer.byteLength(result.stdout), 1024 * 1024);
    assert.equal(Buffer.byteLength(result.stderr), 1024 * 1024);
    assert.ok(result.droppedBytes.stdout > 0, 'stdout past the cap must be counted');
    assert.ok(result.droppedBytes.stderr > 0, 'stderr past the cap must be counted');
  });

  it('kills a forked child left behind by a worker that exited normally', async () => {
    const result = await drain(startFixture('fork-sleeper.py'));
    assert.equal(result.exitCode, 0);
    assert.deepEqual(result.stageDurationsMs, { build: 2.5 });
    const child = childPidFrom(result.stdout);
    assert.ok(await waitForDeath(child), `forked child ${child} survived the worker`);
  });

  it('turns garbage on fd 3 into a protocol error and kills the worker at once', async () => {
    const worker = startFixture('garbage-fd3.py');
    const first = await worker.next();
    assert.equal(first.type, 'message');
    const result = await drain(worker);
    assert.ok(result.protocolError, 'expected a protocol error');
    assert.match(result.protocolError.message, /not JSON/);
    assert.equal(result.protocolError.role, 'candidate');
    assert.ok(result.durationMs < 20_000, 'the worker must not be left to sleep');
    assert.equal(result.timedOut, null);
  });

  it('passes an allow-listed environment only: no API key or token reaches the worker', async () => {
    const parent = {
      ...process.env,
      OPENAI_API_KEY: 'sk-secret',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      GITHUB_TOKEN: 'ghp-secret',
      NCCL_SOCKET_IFNAME: 'eth0',
      NCCL_AUTH_TOKEN: 'nope',
      AWS_SECRET_ACCESS_KEY: 'nope',
      DB_PASSWORD: 'nope',
      LC_ALL: 'C.UTF-8',
      RANDOM_SETTING: 'dropped',
    };
    const home = path.join(scratch, 'home');
    const worker = startFixture('print-environment.py', {
      environment: buildWorkerEnvironment(parent, {
        homeDirectory: home,
        temporaryDirectory: path.join(scratch, 'tmp'),
        workerDirectory: '/opt/worker',
      }),
    });
    const result = await drain(worker);
    assert.equal(result.exitCode, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as { environment: Record<string, string>; cwd: string };
    const names = Object.keys(printed.environment);
    for (const secret of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'NCCL_AUTH_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'RANDOM_SETTING']) {
      assert.ok(!names.includes(secret), `${secret} reached the worker`);
    }
    assert.ok(!JSON.stringify(printed.environment).includes('secret'));
    assert.equal(printed.environment.NCCL_SOCKET_IFNAME, 'eth0');
    assert.equal(printed.environment.LC_ALL, 'C.UTF-8');
    assert.equal(printed.environment.HOME, home);
    assert.equal(printed.environment.PYTHONPATH, '/opt/worker');
    assert.equal(printed.cwd, scratch);
  });

  it('exchanges requests and messages and ends when stdin closes', async () => {
    const worker = startFixture('echo-requests.py', { role: 'reference', stageLimitsMs: { judge: 10_000 } });
    const hello = await worker.next();
    assert.ok(hello.type === 'message' && hello.message.type === 'hello');
    worker.send({ v: 1, type: 'judge', atol: 0.01, rtol: 0.01, outputs: [{ seed: 4, id: 'correctness-0', input_digest: 'ab' }] });
    const judgement = await worker.next();
    assert.ok(judgement.type === 'message' && judgement.message.type === 'judgement');
    assert.equal(judgement.message.trials[0]?.seed, 4);
    const result = await worker.finish();
    assert.equal(result.exitCode, 0);
    assert.equal(result.stageDurationsMs.judge, 0.5);
  });

  it('cancels through an AbortSignal', async () => {
    const controller = new AbortController();
    const worker = startFixture('hang-in-stage.py', { cancelSignal: controller.signal });
    await worker.next();
    setTimeout(() => controller.abort(), 200);
    const result = await drain(worker);
    assert.equal(result.cancelled, true);
    assert.equal(result.timedOut, null);
    assert.ok(await waitForDeath(childPidFrom(result.stdout)));
  });

  it('reports a missing executable as a spawn error, not an exception', async () => {
    const result = await drain(startFixture('segfault.py', { command: '/nonexistent/python-kforge' }));
    assert.ok(result.spawnError);
    assert.equal(result.pid, undefined);
  });

  it('times out a worker that never says hello', async () => {
    const worker = startFixture('segfault.py', {
      args: ['-c', 'import time; time.sleep(60)'],
      idleLimitMs: 500,
    });
    const result = await drain(worker);
    assert.equal(result.timedOut, 'startup');
  });
});

/** A group is gone once every member is dead; members can linger as zombies for a moment. */
function isProcessGroupAliveAfterReap(groupId: number): boolean {
  return isProcessGroupAlive(groupId) && isProcessAlive(groupId);
}
