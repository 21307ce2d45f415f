import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { freePort } from '../../../test-support/redis-server.js';
import type { WorkerHeartbeat } from '../../queue/redis/queue-worker-heartbeat.js';
import { registerWorkerCommand } from './worker.js';
import { formatWorkersReport, registerWorkersCommand, type WorkersReport } from './workers.js';

interface Ran {
  exitCode: number | undefined;
  stderr: string;
  stdout: string;
  evaluatorsMade: number;
}

async function kforge(args: string[], visible: string[] = []): Promise<Ran> {
  const ran: Ran = { exitCode: undefined, stderr: '', stdout: '', evaluatorsMade: 0 };
  const io = {
    stdout: { write: (text: string) => (ran.stdout += text) },
    stderr: { write: (text: string) => (ran.stderr += text) },
    setExitCode: (code: number) => void (ran.exitCode = code),
    environment: {},
    cwd: '/',
  };
  const program = new Command().exitOverride();
  registerWorkerCommand(program, {
    ...io,
    visibleCudaDevices: async () => visible,
    createEvaluator: () => {
      ran.evaluatorsMade += 1;
      return { evaluate: async () => assert.fail('nothing is evaluated') };
    },
  });
  registerWorkersCommand(program, io);
  await program.parseAsync(['node', 'kforge', ...args]);
  return ran;
}

test('kforge worker checks its flags against the backend and the visible GPUs', async () => {
  const cases: Array<[string[], string[], RegExp]> = [
    [['worker'], [], /expected `--redis` to name a Redis URL/],
    [['worker', '--redis', 'redis://h', '--backend', 'cpu', '--gpus', '0'], [], /`--gpus` is for the cuda and triton backends/],
    [['worker', '--redis', 'redis://h', '--backend', 'cuda', '--concurrency', '2'], ['cuda:0'], /`--concurrency` is for the cpu backend/],
    [['worker', '--redis', 'redis://h', '--gpus', '0,2'], ['cuda:0', 'cuda:1'], /expected `--gpus` to name visible GPUs \(0 to 1\), got `2`/],
    [['worker', '--redis', 'redis://h', '--gpus', '0,0'], ['cuda:0'], /expected `--gpus` to be distinct GPU indices/],
    [['worker', '--redis', 'redis://h', '--backend', 'triton'], [], /no CUDA device is visible/],
    [['worker', '--redis', 'redis://h', '--queue', 'a:b'], [], /expected `--queue` to be letters, digits/],
    [['worker', '--redis', 'redis://h', '--stall-timeout', '0'], [], /expected `--stall-timeout` to be a positive number of seconds, got `0`/],
  ];
  for (const [args, visible, message] of cases) {
    const ran = await kforge(args, visible);
    assert.equal(ran.exitCode, 2, args.join(' '));
    assert.match(ran.stderr, message, args.join(' '));
    assert.equal(ran.evaluatorsMade, 0, 'no evaluator is made for misuse');
  }
});

test('kforge worker and kforge workers say how to start a Redis when none answers', async () => {
  const port = await freePort();
  const expected = `cannot reach Redis at redis://127.0.0.1:${port}: start one with \`redis-server --port ${port}\` (Debian: apt-get install redis-server)`;
  const worker = await kforge(['worker', '--redis', `redis://127.0.0.1:${port}`, '--backend', 'cpu']);
  assert.deepEqual([worker.exitCode, worker.stderr.trim()], [2, `kforge worker: ${expected}`]);
  const workers = await kforge(['workers', '--redis', `redis://127.0.0.1:${port}`]);
  assert.deepEqual([workers.exitCode, workers.stderr.trim(), workers.stdout], [2, `kforge workers: ${expected}`, '']);
});

test('kforge workers shows each worker, its devices and what it is doing, then the job counts', () => {
  const heartbeat = (id: string, overrides: Partial<WorkerHeartbeat>): WorkerHeartbeat => ({
    v: 1,
    id,
    host: 'gpu-1',
    pid: 4242,
    queue: 'kforge',
    bullmqQueue: 'kforge-gpu',
    backend: 'cuda',
    devices: ['cuda:0', 'cuda:1'],
    deviceLocks: [],
    concurrency: 2,
    state: 'ready',
    jobs: [],
    startedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:08.000Z',
    jobsDone: 12,
    jobsFailed: 1,
    intervalMs: 5000,
    ...overrides,
  });
  const zero = { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0, prioritized: 0 };
  const report: WorkersReport = {
    queue: 'kforge',
    workers: [
      heartbeat('gpu-1-4242-aa', {
        jobs: [{ jobId: 'sha256-1', problem: 'p.py', candidate: 'fast.py', attempt: 2, stage: 'candidate:timing', device: 'cuda:1', startedAt: '' }],
      }),
      heartbeat('gpu-1-4243-bb', { pid: 4243, devices: ['cuda:2'], state: 'stopping', jobsDone: 0, jobsFailed: 0 }),
    ],
    jobs: { cpu: zero, gpu: { ...zero, waiting: 3, prioritized: 1, active: 1, completed: 12 } },
  };
  const lines = formatWorkersReport(report, Date.parse('2026-01-01T00:00:10.000Z')).split('\n');
  assert.match(lines[0]!, /^WORKER\s+HOST\s+PID\s+BACKEND\s+DEVICES\s+DONE\s+FAILED\s+SEEN\s+DOING$/);
  assert.match(lines[1]!, /^gpu-1-4242-aa\s+gpu-1\s+4242\s+cuda\s+cuda:0,cuda:1\s+12\s+1\s+2s ago\s+fast\.py \[candidate:timing on cuda:1, attempt 2\]$/);
  assert.match(lines[2]!, /^gpu-1-4243-bb\s+gpu-1\s+4243\s+cuda\s+cuda:2\s+0\s+0\s+2s ago\s+stopping$/);
  assert.equal(lines[3], 'jobs kforge-cpu: 0 waiting, 0 active, 0 completed, 0 failed');
  assert.equal(lines[4], 'jobs kforge-gpu: 4 waiting, 1 active, 12 completed, 0 failed');
  assert.match(formatWorkersReport({ ...report, workers: [] }, 0), /^no worker is connected to queue kforge \(start one with: kforge worker --redis URL\)/);
});
