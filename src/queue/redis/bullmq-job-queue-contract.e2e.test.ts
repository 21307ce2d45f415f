/**
 * BullmqJobQueue and QueueWorker against a real redis-server (started on a free loopback
 * port in a temporary folder, killed after), with a scripted evaluator in this process: the
 * JobQueue conformance suite (job-queue-conformance.ts), then what is BullMQ's own: payloads,
 * results kept and reused, jobs removed and failed in Redis, device locks, heartbeats, returned
 * jobs, and the message for an unreachable Redis. Skipped, saying why, without redis-server.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import { freePort, redisUnavailable, startTestRedis, type TestRedis } from '../../../test-support/redis-server.js';
import { openRedisJobQueue, type BullmqJobQueue } from './bullmq-job-queue.js';
import { DeviceLockHeldError } from '../../eval/pipeline/device-lock-held-error.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import { decodeJobFailure } from '../evaluation-job-messages.js';
import { createJobPayload, evaluationJobId } from '../evaluation-job-payload.js';
import { QueueWorker } from './queue-worker.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import { describeJobQueueConformance, ScriptedEvaluator } from '../../../test-support/conformance/job-queue-conformance.js';
import { bullmqQueueName } from './redis-keys.js';
import { RedisUnreachableError } from './redis-unreachable-error.js';

const skip = redisUnavailable();

let root = '';
let redis: TestRedis;
let queue: BullmqJobQueue;
let worker: QueueWorker;
const evaluator = new ScriptedEvaluator();
const problemPath = (): string => path.join(root, 'problem.py');

async function candidateFile(name: string, source: string): Promise<string> {
  const file = path.join(root, name);
  await writeFile(file, source);
  return file;
}

const request = (candidatePath: string): EvaluationRequest => ({
  problemPath: problemPath(),
  candidatePath,
  backend: 'cpu',
  precision: 'fp32',
  tolerance: 'kernelbench',
});

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

before(async () => {
  if (skip) return;
  root = await mkdtemp(path.join(os.tmpdir(), 'kforge-bullmq-contract-'));
  redis = await startTestRedis(path.join(root, 'redis'));
  await writeFile(problemPath(), 'import torch\n');
  queue = await openRedisJobQueue({ url: redis.url, pollIntervalMs: 200 });
  worker = await QueueWorker.start({
    redisUrl: redis.url,
    backend: 'cpu',
    devices: ['cpu'],
    deviceLocks: [],
    concurrency: 1,
    evaluator,
    stallTimeoutMs: 2000,
    heartbeatIntervalMs: 200,
    scratchRoot: root,
  });
});

after(async () => {
  if (skip) return;
  await queue?.close({ cancel: true });
  await worker?.stop({ returnJobs: true });
  await redis?.stop();
  await rm(root, { recursive: true, force: true });
});

describeJobQueueConformance(
  'BullmqJobQueue with an QueueWorker on a real Redis',
  async () => {
    const scripted = new ScriptedEvaluator();
    const folder = await mkdtemp(path.join(root, 'conformance-'));
    const conforming = await openRedisJobQueue({ url: redis.url, queueName: 'conformance', pollIntervalMs: 200 });
    const conformingWorker = await QueueWorker.start({
      redisUrl: redis.url,
      queueName: 'conformance',
      backend: 'cpu',
      devices: ['cpu'],
      deviceLocks: [],
      concurrency: 1,
      evaluator: scripted,
      stallTimeoutMs: 2000,
      heartbeatIntervalMs: 200,
      scratchRoot: folder,
    });
    return {
      queue: conforming,
      evaluator: scripted,
      folder,
      close: async () => {
        await conforming.close({ cancel: true });
        await conformingWorker.stop({ returnJobs: true });
      },
    };
  },
  { skip, sharesEqualJobs: true },
);

describe('BullmqJobQueue with an QueueWorker on a real Redis', { skip, timeout: 60_000 }, () => {
  it('runs equal requests as one job, relays its events, and reuses the stored result', async () => {
    const file = await candidateFile('equal.py', '# equal\nHOLD:equal\n');
    const seen: string[] = [];
    const off = [
      queue.on('job-queued', ({ jobId }) => seen.push(`queued ${jobId}`)),
      queue.on('job-started', ({ jobId }) => seen.push(`started ${jobId}`)),
      queue.on('job-progress', ({ jobId, progress }) => seen.push(`${progress.kind} ${jobId}`)),
      queue.on('job-pipeline', ({ jobId, event }) => seen.push(`${event.kind} ${jobId}`)),
      queue.on('job-finished', ({ jobId }) => seen.push(`finished ${jobId}`)),
    ];
    const before = evaluator.calls.length;
    const payload = createJobPayload({
      problem: { name: 'problem.py', source: 'import torch\n' },
      candidate: { name: 'named.py', source: '# equal\nHOLD:equal\n' },
      options: request(file),
    });
    const first = queue.submit(request(file), { jobId: 'a' });
    const second = queue.submit(request(file), { jobId: 'b' });
    const third = queue.submitPayload(payload, { jobId: 'c' });
    await evaluator.started('equal');
    setTimeout(() => evaluator.release('equal'), 8000).unref(); // so a failure below does not hold the worker forever
    await until(() => seen.includes('stage-started c') && seen.includes('started a'), 'relayed progress');
    assert.deepEqual(queue.counts(), { waiting: 0, running: 3, finished: 0, failed: 0 });
    let heartbeat: Awaited<ReturnType<BullmqJobQueue['workers']>>[number] | undefined;
    await until(async () => Boolean((heartbeat = (await queue.workers())[0])?.jobs[0]?.device), 'a heartbeat with the job on its device');
    // The payload (sources in hand) reaches Redis before the file submissions, which read their files first.
    assert.equal(heartbeat?.jobs[0]?.candidate, 'named.py');
    assert.equal(heartbeat?.jobs[0]?.stage, 'candidate:build');
    assert.equal(heartbeat?.jobs[0]?.device, 'cpu');
    evaluator.release('equal');
    const [a, b, c] = await Promise.all([first, second, third]);
    for (const remove of off) remove();
    assert.equal(evaluator.calls.length - before, 1, 'one evaluation for three equal submissions');
    assert.equal(a.candidate, file);
    assert.equal(b.problem, problemPath());
    assert.equal(c.result.candidate, 'named.py');
    assert.equal(c.jobId, evaluationJobId(payload));
    assert.deepEqual(
      c.attempts.map((attempt) => attempt.workerId),
      [worker.id],
    );
    for (const id of ['a', 'b', 'c'])
      for (const event of ['queued', 'started', 'device-acquired', 'finished']) assert.ok(seen.includes(`${event} ${id}`), `${event} ${id}`);
    const counts = await queue.queueCounts();
    assert.equal(counts.cpu.completed, 1);

    const again = await queue.submitPayload(payload);
    assert.equal(again.reused, true);
    assert.equal(evaluator.calls.length - before, 1, 'the stored result was reused');
    assert.equal((await queue.queueCounts()).cpu.completed, 1);
  });

  it('removes a waiting job when its submission is aborted, and stops a running one', async () => {
    const running = await candidateFile('running.py', 'HOLD:running\n');
    const waiting = await candidateFile('waiting.py', 'waits behind running\n');
    const runningControl = new AbortController();
    const waitingControl = new AbortController();
    const runningJob = queue.submit(request(running), { signal: runningControl.signal });
    await evaluator.started('running');
    const waitingJob = queue.submit(request(waiting), { signal: waitingControl.signal });
    const waitingId = evaluationJobId(
      createJobPayload({
        problem: { name: 'p.py', source: 'import torch\n' },
        candidate: { name: 'w.py', source: 'waits behind running\n' },
        options: request(waiting),
      }),
    );
    const lane = new Queue(bullmqQueueName('kforge', 'cpu'), { connection: { url: redis.url } });
    try {
      await until(async () => (await lane.getJobState(waitingId)) === 'waiting', 'the waiting job in Redis');
      waitingControl.abort();
      await assert.rejects(waitingJob, EvaluationCancelledError);
      await until(async () => (await lane.getJobState(waitingId)) === 'unknown', 'the waiting job removed');
      const call = evaluator.calls.at(-1)!;
      runningControl.abort();
      await assert.rejects(runningJob, EvaluationCancelledError);
      await until(() => call.aborted, 'the running evaluation aborted by its worker');
      const runningId = evaluationJobId(
        createJobPayload({
          problem: { name: 'p.py', source: 'import torch\n' },
          candidate: { name: 'r.py', source: 'HOLD:running\n' },
          options: request(running),
        }),
      );
      await until(async () => (await lane.getJobState(runningId)) === 'failed', 'the running job failed as cancelled');
      assert.equal(decodeJobFailure((await lane.getJob(runningId))?.failedReason).kind, 'cancelled');
      // Submitting it again evaluates it again.
      const retried = queue.submit(request(running));
      await evaluator.started('running');
      evaluator.release('running');
      assert.equal((await retried).verdict, 'correct');
    } finally {
      await lane.close();
    }
  });

  it('refuses a second owner of a GPU until the first stops', async () => {
    const start = (): Promise<QueueWorker> =>
      QueueWorker.start({
        redisUrl: redis.url,
        queueName: 'locks',
        backend: 'cuda',
        devices: ['cuda:0', 'cuda:1'],
        deviceLocks: ['gpu0', 'gpu1'],
        concurrency: 2,
        evaluator,
        heartbeatIntervalMs: 200,
        host: 'gpu-host',
      });
    const owner = await start();
    await assert.rejects(start(), (error: unknown) => {
      assert.ok(error instanceof DeviceLockHeldError);
      assert.equal(error.context.holder, owner.id);
      assert.match(error.message, /device gpu0 of host gpu-host is owned by worker/);
      return true;
    });
    const other = await QueueWorker.start({
      redisUrl: redis.url,
      queueName: 'locks',
      backend: 'cuda',
      devices: ['cuda:2'],
      deviceLocks: ['gpu2'],
      concurrency: 1,
      evaluator,
      heartbeatIntervalMs: 200,
      host: 'gpu-host',
    });
    const lister = await openRedisJobQueue({ url: redis.url, queueName: 'locks' });
    const workers = await lister.workers();
    await lister.close();
    assert.deepEqual(workers.map((heartbeat) => heartbeat.deviceLocks).sort(), [
      ['kforge:device:gpu-host:gpu0', 'kforge:device:gpu-host:gpu1'],
      ['kforge:device:gpu-host:gpu2'],
    ]);
    await Promise.all([owner.stop(), other.stop()]);
    const next = await start();
    await next.stop();
  });

  it('finishes running jobs on stop, and on a second stop gives them back to the queue uncounted', async () => {
    const options = {
      redisUrl: redis.url,
      queueName: 'returning',
      backend: 'cpu',
      devices: ['cpu'],
      deviceLocks: [],
      concurrency: 1,
      evaluator,
      stallTimeoutMs: 2000,
      heartbeatIntervalMs: 200,
      scratchRoot: root,
    } as const;
    const coordinator = await openRedisJobQueue({ url: redis.url, queueName: 'returning', pollIntervalMs: 200 });
    try {
      const first = await QueueWorker.start(options);
      const finishing = coordinator.submit(request(await candidateFile('finishing.py', 'HOLD:finishing\n')));
      await evaluator.started('finishing');
      const stopped = first.stop();
      setTimeout(() => evaluator.release('finishing'), 300);
      assert.equal((await finishing).verdict, 'correct', 'a stopping worker finishes its job');
      await stopped;

      const second = await QueueWorker.start(options);
      const returned = coordinator.submitPayload(
        createJobPayload({
          problem: { name: 'problem.py', source: 'import torch\n' },
          candidate: { name: 'returned.py', source: 'HOLD:returned\n' },
          options: request(problemPath()),
        }),
      );
      await evaluator.started('returned');
      void second.stop();
      await second.stop({ returnJobs: true });
      const third = await QueueWorker.start(options);
      await evaluator.started('returned');
      evaluator.release('returned');
      const finished = await returned;
      assert.deepEqual(
        finished.attempts.map((attempt) => [attempt.attempt, attempt.workerId]),
        [[1, third.id]],
        'the returned start does not count',
      );
      await third.stop();
    } finally {
      await coordinator.close({ cancel: true });
    }
  });

  it('says how to start a Redis when none answers', async () => {
    const port = await freePort();
    await assert.rejects(openRedisJobQueue({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 1500 }), (error: unknown) => {
      assert.ok(error instanceof RedisUnreachableError);
      assert.equal(
        error.message,
        `cannot reach Redis at redis://127.0.0.1:${port}: start one with \`redis-server --port ${port}\` (Debian: apt-get install redis-server)`,
      );
      return true;
    });
    await assert.rejects(openRedisJobQueue({ url: 'http://example.com' }), RedisUnreachableError);
  });
});
