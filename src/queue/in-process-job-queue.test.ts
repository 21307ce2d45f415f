import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { correctResult } from '../../test-support/fake-evaluator.js';
import type { EvaluationResult } from '../core/verdict.js';
import { EvaluationCancelledError } from '../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, Evaluation, EvaluationRequest, Evaluator } from '../eval/evaluator.js';
import { InProcessJobQueue } from './in-process-job-queue.js';
import { JobQueueClosedError } from './job-queue-closed-error.js';
import type { JobQueueEvents } from './job-queue.js';
import { describeJobQueueConformance, ScriptedEvaluator } from '../../test-support/conformance/job-queue-conformance.js';

function request(name: string): EvaluationRequest {
  return { problemPath: '/p.py', candidatePath: `/${name}.py`, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' };
}

/** An evaluator whose evaluations finish when the test says so; it records what it was asked. */
class ControlledEvaluator implements Evaluator {
  readonly started: string[] = [];
  readonly #pending = new Map<string, { resolve: (result: EvaluationResult) => void; reject: (error: unknown) => void }>();
  running = 0;
  maxRunning = 0;
  closed = false;

  evaluate(job: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    this.started.push(job.candidatePath);
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    options.onProgress?.({ kind: 'stage-started', role: 'candidate', stage: 'build' });
    options.onPipelineEvent?.({ kind: 'device-acquired', device: 'cpu', waitedMs: 0 });
    return new Promise<EvaluationResult>((resolve, reject) => {
      const settle = { resolve, reject };
      this.#pending.set(job.candidatePath, settle);
      options.signal?.addEventListener('abort', () => reject(new EvaluationCancelledError()), { once: true });
    })
      .then((result) => ({ result, usage: { device: 'cpu', waitedMs: 0, heldMs: 0 } }))
      .finally(() => (this.running -= 1));
  }

  finish(candidatePath: string): void {
    this.#pending.get(candidatePath)!.resolve(correctResult({ candidate: candidatePath, medianMs: 1 }));
  }

  fail(candidatePath: string, error: Error): void {
    this.#pending.get(candidatePath)!.reject(error);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describeJobQueueConformance(
  'InProcessJobQueue',
  async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'kforge-in-process-queue-'));
    const evaluator = new ScriptedEvaluator();
    const queue = new InProcessJobQueue({ evaluator, concurrency: 1 });
    return {
      queue,
      evaluator,
      folder,
      close: async () => {
        await queue.close({ cancel: true });
        await rm(folder, { recursive: true, force: true });
      },
    };
  },
  { sharesEqualJobs: false },
);

describe('InProcessJobQueue', () => {
  it('runs jobs in order within its concurrency, with events for each', async () => {
    const evaluator = new ControlledEvaluator();
    const queue = new InProcessJobQueue({
      evaluator,
      concurrency: 2,
      createJobId: (() => {
        let n = 0;
        return () => `job-${(n += 1)}`;
      })(),
    });
    const events: string[] = [];
    for (const name of ['job-queued', 'job-started', 'job-progress', 'job-pipeline', 'job-finished', 'job-failed'] as const) {
      queue.on(name, (payload: JobQueueEvents[typeof name]) => events.push(`${name} ${payload.jobId}`));
    }
    const [a, b, c] = ['a', 'b', 'c'].map((name) => queue.submit(request(name))) as [
      Promise<EvaluationResult>,
      Promise<EvaluationResult>,
      Promise<EvaluationResult>,
    ];
    await tick();
    assert.deepEqual(evaluator.started, ['/a.py', '/b.py'], 'the third waits for a slot');
    assert.deepEqual(queue.counts(), { waiting: 1, running: 2, finished: 0, failed: 0 });
    evaluator.finish('/b.py');
    await tick();
    assert.deepEqual(evaluator.started, ['/a.py', '/b.py', '/c.py']);
    evaluator.finish('/a.py');
    evaluator.fail('/c.py', new Error('the evaluator broke'));
    assert.equal((await a).candidate, '/a.py');
    assert.equal((await b).candidate, '/b.py');
    await assert.rejects(c, /the evaluator broke/);
    assert.equal(evaluator.maxRunning, 2);
    assert.deepEqual(queue.counts(), { waiting: 0, running: 0, finished: 2, failed: 1 });
    assert.deepEqual(
      events.filter((event) => event.endsWith('job-1')),
      ['job-queued job-1', 'job-started job-1', 'job-progress job-1', 'job-pipeline job-1', 'job-finished job-1'],
    );
    assert.ok(events.includes('job-failed job-3'));
  });

  it('waits on close for the jobs running, then closes its evaluator', async () => {
    const evaluator = new ControlledEvaluator();
    const queue = new InProcessJobQueue({ evaluator });
    const job = queue.submit(request('last'));
    await tick();
    const closing = queue.close();
    await assert.rejects(queue.submit(request('late')), JobQueueClosedError);
    assert.equal(evaluator.closed, false, 'not before the running job ended');
    evaluator.finish('/last.py');
    await job;
    await closing;
    assert.equal(evaluator.closed, true);
  });

  it('keeps working when a listener throws, and reports the fault', async () => {
    const evaluator = new ControlledEvaluator();
    const faults: string[] = [];
    const queue = new InProcessJobQueue({ evaluator, onListenerError: (error, event) => faults.push(`${event}: ${(error as Error).message}`) });
    queue.on('job-queued', () => {
      throw new Error('listener fault');
    });
    const job = queue.submit(request('x'));
    await tick();
    evaluator.finish('/x.py');
    assert.equal((await job).verdict, 'correct');
    assert.deepEqual(faults, ['job-queued: listener fault']);
  });
});
