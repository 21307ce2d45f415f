import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { Command } from 'commander';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel } from '../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { freePort } from '../../../test-support/redis-server.js';
import { InProcessJobQueue } from '../../queue/in-process-job-queue.js';
import { JobQueueEvaluator } from '../../queue/job-queue-evaluator.js';
import type { RemoteEvaluation, RemoteEvaluationOptions } from '../evaluator/remote-evaluation.js';
import type { Backend } from '../../core/verdict.js';
import { registerOptimizeCommand } from './optimize.js';

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-optimize-redis-'));
  await mkdir(path.join(folder, 'level1'));
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), path.join(folder, 'level1', '01_relu.py'));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const kernel = (marker: string): string =>
  `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;

async function optimize(
  args: string[],
  openRemoteEvaluation?: (options: RemoteEvaluationOptions) => Promise<RemoteEvaluation>,
  remoteBackend?: (options: { url: string; queueName?: string | undefined }) => Promise<Backend | null>,
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string; localEvaluatorMade: boolean }> {
  let exitCode: number | undefined;
  let stdout = '';
  let stderr = '';
  let localEvaluatorMade = false;
  const program = new Command().exitOverride();
  registerOptimizeCommand(program, {
    createEvaluator: () => {
      localEvaluatorMade = true;
      return new FakeEvaluator();
    },
    createModel: async () => new FakeKernelModel({ replies: [kernel('correct 0.5'), kernel('incorrect')] }),
    ...(openRemoteEvaluation ? { openRemoteEvaluation } : {}),
    ...(remoteBackend ? { remoteBackend } : {}),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stderrIsTerminal: false,
    detectGpus: async () => [],
    environment: {},
    setExitCode: (code) => void (exitCode = code),
    cwd: folder,
    signals: new EventEmitter() as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    exit: () => undefined,
  });
  await program.parseAsync(['node', 'kforge', 'optimize', ...args]);
  return { exitCode, stdout, stderr, localEvaluatorMade };
}

/** A "remote" evaluation over an in-process job queue: the evaluator kforge optimize --redis uses, without Redis. */
function remoteOver(
  evaluator: FakeEvaluator,
  seen: { options?: RemoteEvaluationOptions; closed: boolean },
): (options: RemoteEvaluationOptions) => Promise<RemoteEvaluation> {
  return async (options) => {
    seen.options = options;
    const jobs = new InProcessJobQueue({ evaluator });
    return {
      evaluator: new JobQueueEvaluator(jobs, { slots: () => options.slots ?? 1 }),
      close: async () => {
        seen.closed = true;
        await jobs.close();
      },
    };
  };
}

test('--redis evaluates every candidate through the job queue, not on this machine', async () => {
  const evaluator = new FakeEvaluator();
  const seen: { options?: RemoteEvaluationOptions; closed: boolean } = { closed: false };
  const run = await optimize(
    [
      'level1',
      '--provider',
      'vllm',
      '--model',
      'm',
      '--backend',
      'cpu',
      '--max-candidates',
      '2',
      '--json',
      '--redis',
      'redis://queue-host:6390',
      '--queue',
      'batch',
      '--remote-slots',
      '3',
    ],
    remoteOver(evaluator, seen),
  );
  assert.equal(run.exitCode, 0, run.stderr);
  assert.equal(run.localEvaluatorMade, false);
  assert.equal(evaluator.calls.length, 2);
  assert.deepEqual([seen.options?.url, seen.options?.queueName, seen.options?.slots, seen.options?.backend], ['redis://queue-host:6390', 'batch', 3, 'cpu']);
  assert.equal(seen.closed, true);
  const output = JSON.parse(run.stdout) as { problems: Array<{ candidate_count: number; best: { verdict: string } | null }> };
  assert.deepEqual(
    output.problems.map((problem) => [problem.candidate_count, problem.best?.verdict]),
    [[2, 'correct']],
  );
});

test('--redis without --backend takes the backend the connected workers serve', async () => {
  const evaluator = new FakeEvaluator();
  const seen: { options?: RemoteEvaluationOptions; closed: boolean } = { closed: false };
  const asked: Array<{ url: string; queueName?: string | undefined }> = [];
  const gpuWorkers = async (options: { url: string; queueName?: string | undefined }): Promise<Backend | null> => {
    asked.push(options);
    return 'cuda';
  };
  const run = await optimize(
    ['level1', '--provider', 'vllm', '--model', 'm', '--max-candidates', '1', '--json', '--redis', 'redis://queue-host:6390', '--queue', 'batch'],
    remoteOver(evaluator, seen),
    gpuWorkers,
  );
  assert.equal(run.exitCode, 0, run.stderr);
  assert.deepEqual(asked, [{ url: 'redis://queue-host:6390', queueName: 'batch' }]);
  assert.equal(seen.options?.backend, 'cuda', 'this machine has no GPU, the workers have');
  assert.equal(evaluator.calls[0]?.request.backend, 'cuda');
  assert.match(run.stderr, /the backend is cuda, as the workers connected to the queue serve it/);

  const none = await optimize(
    ['level1', '--provider', 'vllm', '--model', 'm', '--max-candidates', '1', '--json', '--redis', 'redis://queue-host:6390'],
    remoteOver(new FakeEvaluator(), { closed: false }),
    async () => null,
  );
  assert.equal(none.exitCode, 0, none.stderr);
  assert.match(none.stderr, /no GPU is visible, so the backend is cpu/, 'with no worker connected, the local default stands');
});

test('--queue and --remote-slots need --redis; an unreachable Redis is a usage error saying how to start one', async () => {
  const stray = await optimize(['level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--remote-slots', '2']);
  assert.equal(stray.exitCode, 2);
  assert.match(stray.stderr, /`--queue` and `--remote-slots` go with `--redis URL`/);
  const port = await freePort();
  const unreachable = await optimize(['level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--redis', `redis://127.0.0.1:${port}`]);
  assert.equal(unreachable.exitCode, 2);
  assert.match(
    unreachable.stderr,
    new RegExp(
      `kforge optimize: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: start one with \`redis-server --port ${port}\` \\(Debian: apt-get install redis-server\\)`,
    ),
  );
});

test('the remote evaluator runs at most its slots at once, in order, and takes more when the count grows', async () => {
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const order: string[] = [];
  const listeners = new Map<string, Set<(payload: never) => void>>();
  const emit = (event: string, payload: unknown): void => {
    for (const listener of listeners.get(event) ?? []) listener(payload as never);
  };
  // A job queue whose jobs wait 5 ms for a worker and run 40 ms there, as its events say.
  const jobs = {
    submit: async (request: { candidatePath: string }, options: { jobId?: string } = {}) => {
      order.push(request.candidatePath);
      running += 1;
      most = Math.max(most, running);
      emit('job-started', { jobId: options.jobId, waitedMs: 5 });
      await new Promise<void>((resolve) => releases.push(resolve));
      running -= 1;
      emit('job-finished', { jobId: options.jobId, durationMs: 40 });
      return { environment: { device: 'cuda:1' } } as never;
    },
    on: (event: string, listener: (payload: never) => void) => {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(listener);
      return () => listeners.get(event)!.delete(listener);
    },
    counts: () => ({ waiting: 0, running, finished: 0, failed: 0 }),
    close: async () => undefined,
  };
  let slots = 2;
  const remote = new JobQueueEvaluator(jobs as never, { slots: () => slots });
  const request = (name: string) => ({ problemPath: 'p.py', candidatePath: name, backend: 'cuda', precision: 'fp32', tolerance: 'kernelbench' }) as const;
  const aborted = new AbortController();
  const submitted = ['a', 'b', 'c', 'd'].map((name) => remote.evaluate(request(name)));
  const cancelled = remote.evaluate(request('e'), { signal: aborted.signal });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([order, remote.pending], [['a', 'b'], 5]);
  aborted.abort(new Error('stop'));
  await assert.rejects(cancelled, /stop/);
  slots = 3;
  remote.refresh();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, ['a', 'b', 'c']);
  while (releases.length > 0 || order.length < 4) {
    releases.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const evaluations = await Promise.all(submitted);
  assert.equal(most, 3);
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  assert.deepEqual([evaluations[0]!.usage.device, evaluations[0]!.usage.heldMs], ['cuda:1', 40]);
  assert.ok(evaluations[3]!.usage.waitedMs >= 5);
  assert.equal(remote.pending, 0);
});
