/**
 * Evaluation workers on Redis, end to end with real processes: a redis-server of the test's own
 * (free loopback port, temporary folder, append-only file), two `kforge worker` processes on the
 * cpu backend (restarted when they die, as a supervisor would), and BullmqJobQueue coordinators
 * (in this process, and one as a child process). The candidates are plain PyTorch (nothing to
 * build) under the `pytorch` guard policy, correctness only; some sleep at import so that a job
 * is still running when something is killed. Proves: jobs spread over both workers; a worker
 * killed mid-job has its job retried by the other, and the result arrives once; a coordinator
 * killed mid-run loses and duplicates nothing; a Redis restart mid-run is survived; a candidate
 * that takes its worker down every time (test-support/dying-worker-main.ts) ends
 * `crashed` after the attempts bound while the workers go on; `kforge workers` lists both; a
 * problem folder's shapes, queued one job each, are judged by its problem.yaml (declared
 * tolerance, forbidden names) as `kforge eval` judges them on this host.
 * Needs redis-server and a Python with PyTorch; skipped, saying why, otherwise.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { startKforgeWorker, type KforgeWorkerProcess } from '../../../test-support/kforge-worker-process.js';
import { redisUnavailable, startTestRedis, type TestRedis } from '../../../test-support/redis-server.js';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { createProblemFolderReader } from '../../eval/problem/problem-folder-reader.js';
import { ShapeSweepEvaluator } from '../../eval/problem/shape-sweep-evaluator.js';
import { JobQueueEvaluator } from '../job-queue-evaluator.js';
import { openRedisJobQueue, type BullmqJobQueue, type FinishedEvaluationJob } from './bullmq-job-queue.js';
import { createJobPayload, evaluationJobId, type EvaluationJobPayload } from '../evaluation-job-payload.js';
import { bullmqQueueName } from './redis-keys.js';
import { WORKER_LOST_CHECK } from './lost-job-result.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

const PYTHON = TORCH_PYTHON;
const skip = redisUnavailable() || torchUnavailable();

let root = '';
let redis: TestRedis;
let queue: BullmqJobQueue;
let lane: Queue;
let workers: KforgeWorkerProcess[] = [];
let problemSource = '';
let candidateSource = '';

/** A correct pure-PyTorch candidate that sleeps `sleepSeconds` at import; `tag` makes its content (its job) distinct. */
function payload(tag: string, sleepSeconds: number, name = `${tag}.py`): EvaluationJobPayload {
  const source = `import time\ntime.sleep(${sleepSeconds})  # ${tag}\n${candidateSource}`;
  return createJobPayload({
    problem: { name: 'scale-add.py', source: problemSource },
    candidate: { name, source },
    options: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench', trials: 2, skipTiming: true, guardPolicy: 'pytorch' },
  });
}

function startWorker(name: string): KforgeWorkerProcess {
  return startKforgeWorker({
    name,
    args: ['--redis', redis.url, '--backend', 'cpu', '--stall-timeout', '2', '--heartbeat', '1'],
    cwd: root,
    environment: {
      ...process.env,
      KFORGE_PYTHON: PYTHON,
      KFORGE_CACHE_DIR: path.join(root, 'cache'),
      TMPDIR: path.join(root, 'tmp'),
      KFORGE_LOG_LEVEL: 'error',
      NODE_OPTIONS: '',
    },
    dieOnCandidate: 'dies-with-worker',
  });
}

async function until<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${workers.map((worker) => worker.stderr).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Jobs of the cpu lane in a state now. */
async function jobsIn(state: 'completed' | 'waiting' | 'active' | 'failed'): Promise<number> {
  return (await lane.getJobCounts(state))[state] ?? 0;
}

function assertCorrect(finished: FinishedEvaluationJob): void {
  assert.ok(evaluationResultSchema.safeParse(finished.result).success);
  assert.equal(finished.result.verdict, 'correct', JSON.stringify(finished.result.reasons));
}

/** The worker (and its pid) a heartbeat shows running a job. */
async function workerRunning(jobId: string): Promise<{ id: string; pid: number }> {
  return until(async () => {
    const running = (await queue.workers()).find((heartbeat) => heartbeat.jobs.some((job) => job.jobId === jobId && job.stage !== null));
    return running ? { id: running.id, pid: running.pid } : null;
  }, `a worker running ${jobId}`);
}

before(async () => {
  if (skip) return;
  root = await mkdtemp(path.join(os.tmpdir(), 'kforge-workers-e2e-'));
  await mkdir(path.join(root, 'tmp'));
  problemSource = await readFile(fixturePath('problems', 'scale-add.py'), 'utf8');
  candidateSource = await readFile(fixturePath('candidates', 'scale-add-correct.py'), 'utf8');
  redis = await startTestRedis(path.join(root, 'redis'));
  workers = [startWorker('worker-a'), startWorker('worker-b')];
  await Promise.all(workers.map((worker) => worker.ready));
  queue = await openRedisJobQueue({ url: redis.url, pollIntervalMs: 250 });
  lane = new Queue(bullmqQueueName('kforge', 'cpu'), { connection: { url: redis.url } });
});

after(async () => {
  if (skip) return;
  await queue?.close({ cancel: true });
  await lane?.close();
  await Promise.all(workers.map((worker) => worker.stop()));
  await redis?.stop();
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
});

describe('evaluation workers on Redis with real processes', { skip, timeout: 600_000 }, () => {
  it('spreads jobs over both workers, runs equal jobs once, and `kforge workers` lists both', async () => {
    const payloads = [1, 2, 3, 4].map((index) => payload(`spread-${index}`, 2));
    const copy = { ...payloads[0]!, candidate: { ...payloads[0]!.candidate, name: 'same-source.py' } };
    const finished = await Promise.all([...payloads, copy].map((each) => queue.submitPayload(each)));
    finished.forEach(assertCorrect);
    assert.equal(
      new Set(finished.slice(0, 4).map((each) => each.workerId)).size,
      2,
      `both workers evaluated: ${finished.map((each) => each.workerId).join(', ')}`,
    );
    assert.equal(finished[4]!.jobId, finished[0]!.jobId);
    assert.equal(finished[4]!.result.candidate, 'same-source.py');
    assert.deepEqual(
      finished.map((each) => each.attempts.length),
      [1, 1, 1, 1, 1],
    );
    assert.equal(await jobsIn('completed'), 4, 'five submissions, four jobs');

    const listing = spawnSync(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'workers', '--redis', redis.url, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: 120_000,
    });
    assert.equal(listing.status, 0, listing.stderr);
    const report = JSON.parse(listing.stdout) as {
      workers: Array<{ id: string; devices: string[]; jobsDone: number; pid: number }>;
      jobs: { cpu: { completed: number } };
    };
    assert.deepEqual(report.workers.map((worker) => worker.id).sort(), workers.map((worker) => worker.workerId).sort());
    assert.deepEqual(
      report.workers.map((worker) => worker.devices),
      [['cpu'], ['cpu']],
    );
    assert.equal(
      report.workers.reduce((sum, worker) => sum + worker.jobsDone, 0),
      4,
    );
    assert.equal(report.jobs.cpu.completed, 4);
  });

  it('retries a job on the other worker when its worker is killed mid-job; the result arrives once', async () => {
    const slow = payload('killed-mid-job', 6);
    let finishedEvents = 0;
    const off = queue.on('job-finished', ({ jobId }) => void (jobId === 'killed-mid-job' && (finishedEvents += 1)));
    const result = queue.submitPayload(slow, { jobId: 'killed-mid-job' });
    const victim = await workerRunning(evaluationJobId(slow));
    const process = workers.find((worker) => worker.workerId === victim.id)!;
    process.autoRestart = true;
    process.kill9();
    const finished = await result;
    off();
    assertCorrect(finished);
    assert.notEqual(finished.workerId, victim.id);
    assert.deepEqual(
      finished.attempts.map((attempt) => [attempt.attempt, attempt.workerId]),
      [
        [1, victim.id],
        [2, finished.workerId],
      ],
    );
    assert.equal(finishedEvents, 1);
    assert.equal(await lane.getJobState(finished.jobId), 'completed');
    await process.ready;
    process.autoRestart = false;
  });

  it('loses and duplicates nothing when the coordinator is killed mid-run', async () => {
    const payloads = [1, 2, 3].map((index) => payload(`coordinator-${index}`, 2));
    const ids = payloads.map(evaluationJobId);
    const payloadsFile = path.join(root, 'coordinator-payloads.json');
    const script = path.join(root, 'coordinator.mts');
    await writeFile(payloadsFile, JSON.stringify(payloads));
    await writeFile(
      script,
      `import { readFileSync } from 'node:fs';\nimport { openRedisJobQueue } from ${JSON.stringify(import.meta.resolve('./bullmq-job-queue.ts'))};\nconst queue = await openRedisJobQueue({ url: process.argv[2] });\nawait Promise.all(JSON.parse(readFileSync(process.argv[3], 'utf8')).map((each) => queue.submitPayload(each)));\nconsole.log('finished');\n`,
    );
    const completedBefore = await jobsIn('completed');
    const coordinator = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), script, redis.url, payloadsFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const exited = new Promise((resolve) => coordinator.once('exit', resolve));
    let output = '';
    let errors = '';
    let exitedEarly = false;
    void exited.then(() => (exitedEarly = true));
    coordinator.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    coordinator.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    await until(async () => {
      // A coordinator that cannot start (a moved module, a bad import) fails here at once, with its stderr.
      if (exitedEarly) throw new Error(`the child coordinator exited before its jobs ran:\n${errors}`);
      const states = await Promise.all(ids.map((id) => lane.getJobState(id)));
      return !states.includes('unknown') && states.includes('active');
    }, "the child coordinator's jobs in Redis, one running");
    coordinator.kill('SIGKILL');
    await exited;
    assert.equal(output, '', 'the coordinator died before its results came');

    const finished = await Promise.all(payloads.map((each) => queue.submitPayload(each)));
    finished.forEach(assertCorrect);
    assert.deepEqual(
      finished.map((each) => each.jobId),
      ids,
    );
    assert.deepEqual(
      finished.map((each) => each.attempts.length),
      [1, 1, 1],
      'each job was evaluated once',
    );
    const counts = await Promise.all((['completed', 'waiting', 'active', 'failed'] as const).map(jobsIn));
    assert.deepEqual([counts[0]! - completedBefore, counts[1], counts[2], counts[3]], [3, 0, 0, 0], 'three jobs, each completed once');
  });

  it('survives a Redis restart during a run', async () => {
    const payloads = [1, 2, 3].map((index) => payload(`restart-${index}`, 3));
    const deathsBefore = workers.map((worker) => worker.deaths.length);
    const completedBefore = await jobsIn('completed');
    const results = Promise.all(payloads.map((each) => queue.submitPayload(each)));
    await workerRunning(evaluationJobId(payloads[0]!)).catch(() => workerRunning(evaluationJobId(payloads[1]!)));
    await redis.restart();
    const finished = await results;
    finished.forEach(assertCorrect);
    assert.equal((await jobsIn('completed')) - completedBefore, 3);
    assert.deepEqual(
      workers.map((worker) => worker.deaths.length),
      deathsBefore,
      'no worker died',
    );
    await until(async () => (await queue.workers()).length === 2, 'both heartbeats after the restart');
  });

  it("judges a problem folder's queued shapes by its problem.yaml, as `kforge eval` does here", async () => {
    const folder = fixturePath('problem-folders', 'scale-shift');
    // Off by 1e-3: correct under the kernelbench profile's 1e-2, incorrect under the 1e-4 that the
    // folder's problem.yaml declares for float32; the other uses a name problem.yaml forbids.
    const offset = path.join(root, 'scale-shift-offset.py');
    const loaded = await readFile(fixturePath('problem-folders', 'candidates', 'scale-shift-loaded.py'), 'utf8');
    await writeFile(offset, loaded.replace('return x * self.scale + 1.0', 'return x * self.scale + 1.001'));
    const candidates = [offset, fixturePath('problem-folders', 'candidates', 'scale-shift-forbidden.py')];
    const environment = { ...process.env, KFORGE_PYTHON: PYTHON };
    const remote = new ShapeSweepEvaluator({
      inner: new JobQueueEvaluator(queue),
      readFolder: createProblemFolderReader({ python: PYTHON, workerDirectory: WORKER_DIRECTORY, environment }),
    });
    const options = { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench', trials: 2, skipTiming: true, guardPolicy: 'pytorch' } as const;
    const queued = await Promise.all(candidates.map((candidatePath) => remote.evaluate({ problemPath: folder, candidatePath, ...options })));
    // The same settings as `options`, on this host.
    const flags = '--backend cpu --trials 2 --no-timing --guard-policy pytorch --json'.split(' ');
    const local = spawnSync(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'eval', folder, ...candidates, ...flags], {
      encoding: 'utf8',
      cwd: root,
      env: { ...environment, KFORGE_CACHE_DIR: path.join(root, 'cache'), NODE_OPTIONS: '' },
      timeout: 600_000,
    });
    assert.equal(local.status, 1, local.stderr);
    // A batch prints each line as its candidate finishes: put them in the candidates' order.
    const printed = local.stdout
      .trim()
      .split('\n')
      .map((line) => evaluationResultSchema.parse(JSON.parse(line)));
    const locals = candidates.map((candidatePath) => {
      const found = printed.find((result) => path.resolve(root, result.candidate) === candidatePath);
      assert.ok(found, `kforge eval printed no line for ${candidatePath}: ${local.stdout}`);
      return found;
    });
    const summary = (result: EvaluationResult) => ({
      verdict: result.verdict,
      checks: result.reasons.map((reason) => reason.check),
      toleranceSource: result.correctness?.tolerance_source,
      shapes: result.shapes?.map((shape) => [shape.index, shape.verdict]),
    });
    assert.deepEqual(
      queued.map(({ result }) => summary(result)),
      locals.map(summary),
    );
    assert.deepEqual(summary(queued[0]!.result), {
      verdict: 'incorrect',
      checks: ['mismatch'],
      toleranceSource: 'problem',
      shapes: [
        [0, 'incorrect'],
        [1, 'incorrect'],
        [2, 'incorrect'],
      ],
    });
    assert.equal(queued[1]!.result.verdict, 'rejected');
    assert.equal(queued[1]!.result.reasons[0]?.check, 'forbidden');
  });

  it('ends a job whose candidate takes every worker down `crashed` after the attempts bound, and the workers go on', async () => {
    for (const worker of workers) worker.autoRestart = true;
    const deathsBefore = workers.reduce((sum, worker) => sum + worker.deaths.length, 0);
    const finished = await queue.submitPayload(payload('crash', 0, 'dies-with-worker.py'));
    assert.ok(evaluationResultSchema.safeParse(finished.result).success);
    assert.equal(finished.result.verdict, 'crashed');
    assert.equal(finished.attempts.length, 3);
    assert.equal(new Set(finished.attempts.map((attempt) => attempt.pid)).size, 3, 'three worker processes died');
    assert.equal(finished.result.reasons[0]?.check, WORKER_LOST_CHECK);
    assert.match(finished.result.reasons[0]!.message, /started 3 times \(the bound is 3\)/);
    assert.match(finished.result.diagnostics.stderr, /attempt 3: worker \S+ \(host \S+, pid \d+\)/);
    assert.equal(workers.reduce((sum, worker) => sum + worker.deaths.length, 0) - deathsBefore, 3);
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.autoRestart = false;
    assertCorrect(await queue.submitPayload(payload('after-the-crash', 0)));
  });
});
