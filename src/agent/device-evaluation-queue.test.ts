import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { DeviceEvaluationQueue } from './device-evaluation-queue.js';

test('evaluations on one device run one at a time, in order; different GPUs run together', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-queue-'));
  try {
    const candidate = path.join(folder, 'candidate.py');
    await writeFile(candidate, '# fake-verdict: correct 0.5\n');
    const evaluator = new FakeEvaluator({ delayMs: 20 });
    const queue = new DeviceEvaluationQueue(evaluator);
    const request = (deviceIndex: number): EvaluationRequest => ({ problemPath: 'p.py', candidatePath: candidate, backend: 'cuda', precision: 'fp32', tolerance: 'kernelbench', deviceIndex });
    const results = await Promise.all([queue.submit(request(0)), queue.submit(request(0)), queue.submit(request(0))]);
    assert.equal(evaluator.maxConcurrent, 1);
    assert.deepEqual(results.map((result) => result.device), ['cuda:0', 'cuda:0', 'cuda:0']);
    assert.ok(results[2]!.waitedMs >= 30, 'the third waited for the first two');
    assert.ok(results.every((result) => result.deviceMs >= 15));
    const spread = new FakeEvaluator({ delayMs: 20 });
    const twoGpus = new DeviceEvaluationQueue(spread);
    await Promise.all([twoGpus.submit(request(0)), twoGpus.submit(request(1))]);
    assert.equal(spread.maxConcurrent, 2);
    assert.equal(queue.pending, 0);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('an evaluation aborted while it waits is never started', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-queue-'));
  try {
    const candidate = path.join(folder, 'candidate.py');
    await writeFile(candidate, '');
    const evaluator = new FakeEvaluator({ delayMs: 30 });
    const queue = new DeviceEvaluationQueue(evaluator);
    const request: EvaluationRequest = { problemPath: 'p.py', candidatePath: candidate, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' };
    const controller = new AbortController();
    const first = queue.submit(request);
    const second = queue.submit(request, { signal: controller.signal });
    controller.abort();
    await assert.rejects(second);
    await first;
    assert.equal(evaluator.calls.length, 1);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('the limiter holds each key to its own limit and refuses a bad one', async () => {
  const limiter = new ConcurrencyLimiter({ defaultLimit: 1, limits: { openai: 2 } });
  let peak = 0;
  const task = async () => {
    peak = Math.max(peak, limiter.running('openai'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  };
  await Promise.all([1, 2, 3, 4].map(() => limiter.run('openai', task)));
  assert.equal(peak, 2);
  assert.equal(limiter.limitOf('anthropic'), 1);
  assert.throws(() => new ConcurrencyLimiter({ limits: { vllm: 0 } }), /'vllm' to be a positive integer, got 0/);
});
