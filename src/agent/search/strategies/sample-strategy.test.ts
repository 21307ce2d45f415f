import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { ModelCallError } from '../../../llm/model-call-error.js';
import { SqliteRunStore } from '../../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator } from '../../../../test-support/fake-evaluator.js';
import { FakeKernelModel, type FakeStep } from '../../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../../test-support/fixture-paths.js';
import type { OptimizePlanInput } from '../../run/optimize-plan.js';
import { startOptimizeRun } from '../../run/optimize-run.js';

let folder: string;
let store: SqliteRunStore;
let problemPath: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-sample-'));
  problemPath = path.join(folder, '01_relu.py');
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), problemPath);
  store = await SqliteRunStore.open({ path: ':memory:' });
});

afterEach(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

function plan(overrides: Partial<OptimizePlanInput> = {}): OptimizePlanInput {
  return {
    version: 1,
    problems: [problemPath],
    strategy: 'sample',
    perProblem: {},
    total: {},
    evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' },
    stall: { patience: 50, policy: 'continue' },
    model: { provider: 'files', model: 'scripted' },
    outDir: path.join(folder, 'out'),
    candidatesDir: path.join(folder, 'candidates'),
    ...overrides,
  };
}

function kernel(marker: string): string {
  return `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
}

/** A step that answers after `ms`, counting how many calls are in flight at once. */
function slow(text: string, ms: number, counter: { now: number; max: number }): FakeStep {
  return async () => {
    counter.now += 1;
    counter.max = Math.max(counter.max, counter.now);
    await new Promise((resolve) => setTimeout(resolve, ms));
    counter.now -= 1;
    return text;
  };
}

test('sample asks for n independent candidates in parallel, evaluates one at a time, keeps the best', async () => {
  const inFlight = { now: 0, max: 0 };
  const model = new FakeKernelModel({
    replies: [
      slow(kernel('correct 0.9'), 30, inFlight),
      slow(kernel('compile_error'), 30, inFlight),
      slow(kernel('correct 0.3'), 30, inFlight),
      slow(kernel('correct 0.5'), 30, inFlight),
    ],
  });
  const evaluator = new FakeEvaluator({ delayMs: 15 });
  const report = await startOptimizeRun(plan({ strategies: { sample: { samples: 4, width: 3 } }, concurrency: { fake: 2 } }), { store, model, evaluator });

  assert.equal(model.calls.length, 4);
  assert.equal(inFlight.max, 2, 'the provider limit of 2 holds although the strategy asks for 3 at once');
  assert.equal(evaluator.maxConcurrent, 1, 'never two evaluations on one device at once');
  const prompts = new Set(model.calls.map((call) => call.messages[1]!.content));
  assert.equal(prompts.size, 1, 'every sample sees the same prompt: none sees another');
  const candidates = await store.listCandidates(report.runId);
  assert.ok(candidates.every((candidate) => candidate.round === 0 && candidate.parentId === null));
  assert.equal(report.problems[0]!.best?.result.timing?.candidate_ms.median, 0.3);
  assert.equal(report.problems[0]!.endReason, 'strategy-finished');
});

test('sample stops at --max-candidates when no sample count is given', async () => {
  const model = new FakeKernelModel({ replies: Array.from({ length: 10 }, () => kernel('correct 0.9')) });
  const report = await startOptimizeRun(plan({ perProblem: { maxCandidates: 3 } }), { store, model, evaluator: new FakeEvaluator() });
  assert.equal(model.calls.length, 3);
  assert.equal(report.problems[0]!.endReason, 'candidates');
});

test('a failed model call is recorded and the sample asked for again', async () => {
  const failure = new ModelCallError('HTTP 429: rate limited (after 4 attempts)', {
    provider: 'fake',
    modelId: 'fake-model',
    reason: 'rate-limited',
    statusCode: 429,
    isRetryable: true,
    attempts: 4,
    failedAttempts: [],
    elapsedMs: 12,
  });
  const model = new FakeKernelModel({ replies: [failure, kernel('correct 0.5')] });
  const report = await startOptimizeRun(plan({ strategies: { sample: { samples: 1 } } }), { store, model, evaluator: new FakeEvaluator() });
  assert.equal(model.calls.length, 2);
  const failed = await store.listEvents(report.runId, { types: ['model-call-failed'] });
  assert.equal(failed.length, 1);
  assert.match(String(failed[0]!.payload.message), /429/);
  const calls = await store.listModelCalls(report.runId);
  assert.equal(calls[0]!.error, 'HTTP 429: rate limited (after 4 attempts)');
  assert.equal(report.problems[0]!.best?.verdict, 'correct');
});

test('a provider that hangs is cut off by the wall-clock budget', async () => {
  const hang: FakeStep = (request) =>
    new Promise<string>((_resolve, reject) => request.signal?.addEventListener('abort', () => reject(request.signal?.reason), { once: true }));
  const model = new FakeKernelModel({ replies: [hang] });
  const started = Date.now();
  const report = await startOptimizeRun(plan({ perProblem: { maxWallMs: 300 }, strategies: { sample: { samples: 1 } } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
  });
  assert.ok(Date.now() - started < 5000);
  assert.equal(report.problems[0]!.endReason, 'wall-clock');
  assert.equal(report.problems[0]!.best, null);
});
