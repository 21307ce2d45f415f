import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { correctResult } from '../fake-evaluator.js';
import { EvaluationCancelledError } from '../../src/eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, Evaluation, EvaluationRequest, Evaluator } from '../../src/eval/evaluator.js';
import { EvaluatorSetupError } from '../../src/eval/evaluator-setup-error.js';
import { MachineFaultError, type MachineFaultResource } from '../../src/eval/machine-fault-error.js';
import { declarationsBeside } from '../../src/eval/problem/problem-folder.js';
import { JobQueueClosedError } from '../../src/queue/job-queue-closed-error.js';
import type { JobQueue } from '../../src/queue/job-queue.js';

/**
 * The evaluator behind a queue under test: it records its calls (the candidate's source, and the
 * problem folder's declarations it finds beside the problem); a candidate holding `HOLD:<tag>`
 * waits until `release(tag)` (or its abort), one holding `SETUP-FAULT` throws an EvaluatorSetupError,
 * one holding `MACHINE-FAULT:<resource>` a MachineFaultError of that resource.
 */
export class ScriptedEvaluator implements Evaluator {
  readonly calls: Array<{ source: string; aborted: boolean; declarations: Record<string, string> }> = [];
  readonly #held = new Map<string, () => void>();
  readonly #waiting = new Map<string, () => void>();

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    const source = await readFile(request.candidatePath, 'utf8');
    const declarations = Object.fromEntries(
      await Promise.all((await declarationsBeside(request.problemPath)).map(async (file) => [path.basename(file), await readFile(file, 'utf8')] as const)),
    );
    const call = { source, aborted: false, declarations };
    this.calls.push(call);
    if (source.includes('SETUP-FAULT')) throw new EvaluatorSetupError('python3 cannot import torch', { hint: 'run `kforge doctor`' });
    const machine = /MACHINE-FAULT:([\w-]+)/.exec(source)?.[1];
    if (machine) {
      throw new MachineFaultError(`the reference ran out of ${machine}`, {
        resource: machine as MachineFaultResource,
        role: 'reference',
        stage: 'correctness',
        hint: 'free some memory and try again',
        retryAfterSeconds: 45,
        detail: 'Traceback: torch.OutOfMemoryError',
      });
    }
    options.onProgress?.({ kind: 'stage-started', role: 'candidate', stage: 'build' });
    options.onPipelineEvent?.({ kind: 'device-acquired', device: 'cpu', waitedMs: 0 });
    const tag = /HOLD:(\w+)/.exec(source)?.[1];
    if (tag) {
      this.#waiting.get(tag)?.();
      await new Promise<void>((resolve, reject) => {
        this.#held.set(tag, () => {
          this.#held.delete(tag);
          resolve();
        });
        options.signal?.addEventListener(
          'abort',
          () => {
            this.#held.delete(tag);
            call.aborted = true;
            reject(new EvaluationCancelledError(options.signal?.reason));
          },
          { once: true },
        );
      });
    }
    options.onPipelineEvent?.({ kind: 'device-released', device: 'cpu', heldMs: 1 });
    options.onProgress?.({ kind: 'stage-finished', role: 'candidate', stage: 'build', durationMs: 1 });
    return {
      result: correctResult({ medianMs: 0.5, problem: request.problemPath, candidate: request.candidatePath }),
      usage: { device: 'cpu', waitedMs: 0, heldMs: 1 },
    };
  }

  /** Resolves once a held candidate's evaluation started. */
  started(tag: string): Promise<void> {
    if (this.#held.has(tag)) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.set(tag, resolve));
  }

  release(tag: string): void {
    this.#held.get(tag)?.();
  }
}

/** A queue under test, one job at a time, over a {@link ScriptedEvaluator}. */
export interface JobQueueUnderTest {
  queue: JobQueue;
  evaluator: ScriptedEvaluator;
  /** A folder for candidate and problem files. */
  folder: string;
  /** Frees what `open` made (the queue is closed by the suite's last case, or here if not). */
  close(): Promise<void>;
}

export interface JobQueueConformanceOptions {
  /** A reason to skip the suite (a missing redis-server), or false. */
  skip?: string | false;
  /** Whether equal requests submitted together run as one job (BullMQ: jobs are named by their content). */
  sharesEqualJobs: boolean;
  timeout?: number;
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The behaviour every {@link JobQueue} backend must have, as node:test suites: `open` makes a
 * queue whose jobs run one at a time through the given scripted evaluator. Backend-specific
 * behaviour (stored results, workers, device locks, listener faults) stays in the backend's tests.
 *
 * @example describeJobQueueConformance('InProcessJobQueue', async () => { … }, { sharesEqualJobs: false });
 *
 * Longer than convention 4's 60 lines: a suite is a list of tests, one `it` each, read top to
 * bottom; a function per test would only move them apart.
 */
export function describeJobQueueConformance(backend: string, open: () => Promise<JobQueueUnderTest>, options: JobQueueConformanceOptions): void {
  describe(`JobQueue conformance: ${backend}`, { skip: options.skip ?? false, timeout: options.timeout ?? 60_000 }, () => {
    let subject: JobQueueUnderTest;
    let unique = 0;
    const request = async (source: string): Promise<EvaluationRequest> => {
      const candidatePath = path.join(subject.folder, `candidate-${(unique += 1)}.py`);
      await writeFile(candidatePath, source);
      return { problemPath: path.join(subject.folder, 'problem.py'), candidatePath, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' };
    };

    before(async () => {
      subject = await open();
      await writeFile(path.join(subject.folder, 'problem.py'), 'import torch\n');
    });
    after(async () => subject?.close());

    it('resolves a submission with the evaluator’s result, relaying its events in order', async () => {
      const asked = await request(`# relayed ${Date.now()}\n`);
      const seen: string[] = [];
      const mine = (jobId: string): boolean => jobId === 'relayed';
      const off = [
        subject.queue.on('job-queued', ({ jobId }) => void (mine(jobId) && seen.push('queued'))),
        subject.queue.on('job-started', ({ jobId }) => void (mine(jobId) && seen.push('started'))),
        subject.queue.on('job-progress', ({ jobId, progress }) => void (mine(jobId) && seen.push(progress.kind))),
        subject.queue.on('job-pipeline', ({ jobId, event }) => void (mine(jobId) && seen.push(event.kind))),
        subject.queue.on('job-finished', ({ jobId }) => void (mine(jobId) && seen.push('finished'))),
      ];
      try {
        const result = await subject.queue.submit(asked, { jobId: 'relayed' });
        assert.equal(result.verdict, 'correct');
        assert.equal(result.candidate, asked.candidatePath);
        await until(() => seen.includes('finished'), 'the job-finished event');
        // Progress crosses Redis on its own path: only its order among itself is promised there.
        assert.equal(seen[0], 'queued');
        assert.equal(seen.at(-1), 'finished');
        const relayed = seen.filter((kind) => kind !== 'queued' && kind !== 'started' && kind !== 'finished');
        assert.deepEqual(relayed, ['stage-started', 'device-acquired', 'device-released', 'stage-finished']);
      } finally {
        for (const remove of off) remove();
      }
    });

    it(
      options.sharesEqualJobs ? 'runs equal requests submitted together as one job' : 'gives each of equal requests submitted together the result',
      async () => {
        const source = `# equal ${Date.now()}\nHOLD:equal\n`;
        const asked = await request(source);
        const before = subject.evaluator.calls.length;
        const jobs = [subject.queue.submit(asked, { jobId: 'equal-a' }), subject.queue.submit(asked, { jobId: 'equal-b' })];
        await subject.evaluator.started('equal');
        subject.evaluator.release('equal');
        if (!options.sharesEqualJobs) {
          await subject.evaluator.started('equal');
          subject.evaluator.release('equal');
        }
        const [a, b] = await Promise.all(jobs);
        assert.equal(a!.verdict, 'correct');
        assert.equal(b!.verdict, 'correct');
        assert.equal(subject.evaluator.calls.length - before, options.sharesEqualJobs ? 1 : 2);
      },
    );

    it("evaluates a problem folder's reference.py with the folder's shapes.py and problem.yaml beside it", async () => {
      const folder = path.join(subject.folder, `01_scale-${(unique += 1)}`);
      await mkdir(folder);
      const declared = { 'shapes.py': 'SHAPES = [{"rows": 8}]\n', 'problem.yaml': `tolerance: {fp32: 0.05}\nforbidden: [torch.addcmul]\n# ${unique}\n` };
      for (const [name, text] of Object.entries({ 'reference.py': 'import torch\n', ...declared })) await writeFile(path.join(folder, name), text);
      const asked = { ...(await request(`# folder ${Date.now()}\n`)), problemPath: path.join(folder, 'reference.py') };
      const result = await subject.queue.submit(asked);
      assert.equal(result.verdict, 'correct');
      assert.deepEqual(subject.evaluator.calls.at(-1)?.declarations, declared, 'the evaluator reads the folder the user gave');
    });

    it('cancels a waiting job without evaluating it, and stops a running one', async () => {
      const running = await request(`# running ${Date.now()}\nHOLD:running\n`);
      const waiting = await request(`# waiting ${Date.now()}\n`);
      const runningControl = new AbortController();
      const waitingControl = new AbortController();
      const runningJob = subject.queue.submit(running, { signal: runningControl.signal });
      await subject.evaluator.started('running');
      const call = subject.evaluator.calls.at(-1)!;
      const waitingJob = subject.queue.submit(waiting, { signal: waitingControl.signal });
      await new Promise((resolve) => setTimeout(resolve, 100));
      waitingControl.abort();
      await assert.rejects(waitingJob, EvaluationCancelledError);
      runningControl.abort();
      await assert.rejects(runningJob, EvaluationCancelledError);
      await until(() => call.aborted, 'the running evaluation aborted');
      assert.ok(!subject.evaluator.calls.some((seen) => seen.source.startsWith('# waiting')), 'the cancelled waiting job was never evaluated');
    });

    it('rejects a setup fault with its message and hint, and evaluates again on the next submission', async () => {
      const asked = await request(`SETUP-FAULT ${Date.now()}\n`);
      const before = subject.evaluator.calls.length;
      await assert.rejects(subject.queue.submit(asked), (error: unknown) => {
        assert.ok(error instanceof EvaluatorSetupError);
        assert.match(error.message, /python3 cannot import torch/);
        assert.equal(error.hint, 'run `kforge doctor`');
        return true;
      });
      await assert.rejects(subject.queue.submit(asked), EvaluatorSetupError);
      assert.equal(subject.evaluator.calls.length - before, 2);
    });

    for (const resource of ['device-memory', 'time'] as const) {
      it(`rejects a machine fault (${resource}) as the worker met it: resource, role, stage, hint, when to retry`, async () => {
        const asked = await request(`MACHINE-FAULT:${resource} ${Date.now()}\n`);
        await assert.rejects(subject.queue.submit(asked), (error: unknown) => {
          assert.ok(error instanceof MachineFaultError, `a MachineFaultError, not ${String(error)}`);
          assert.match(error.message, new RegExp(`the reference ran out of ${resource}`));
          assert.equal(error.resource, resource);
          assert.equal(error.role, 'reference');
          assert.equal(error.stage, 'correctness');
          assert.equal(error.hint, 'free some memory and try again');
          assert.equal(error.retryAfterSeconds, 45);
          assert.equal(error.isRetryable, resource !== 'time');
          return true;
        });
      });
    }

    it('on close with cancel, cancels its jobs and refuses new ones', async () => {
      const held = await request(`# closing ${Date.now()}\nHOLD:closing\n`);
      const job = subject.queue.submit(held);
      await subject.evaluator.started('closing');
      const cancelled = assert.rejects(job, (error: unknown) => error instanceof EvaluationCancelledError || error instanceof JobQueueClosedError);
      await subject.queue.close({ cancel: true });
      await cancelled;
      await assert.rejects(subject.queue.submit(await request('# late\n')), JobQueueClosedError);
    });
  });
}
