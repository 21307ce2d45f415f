import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { FakeEvaluator, judgeByMarker } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel } from '../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { CandidateUnevaluatedError } from './candidate-unevaluated-error.js';
import { OptimizeRunError } from './optimize-run-error.js';
import type { OptimizePlanInput } from './optimize-plan.js';
import { resumeOptimizeRun, startOptimizeRun } from './optimize-run.js';
import { tooSlowFault } from '../../../test-support/too-slow-fault.js';

let folder: string;
let store: SqliteRunStore;
let problem: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-fault-'));
  problem = path.join(folder, '01_relu.py');
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), problem);
  store = await SqliteRunStore.open({ path: path.join(folder, 'kforge.db') });
});

afterEach(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

function plan(): OptimizePlanInput {
  return {
    version: 1,
    problems: [problem],
    strategy: 'refine',
    perProblem: { maxCandidates: 2 },
    total: {},
    evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' },
    stall: { patience: 50, policy: 'continue' },
    model: { provider: 'files', model: 'scripted' },
    outDir: path.join(folder, 'out'),
    candidatesDir: path.join(folder, 'candidates'),
  };
}

function kernel(marker: string, tag: string): string {
  return `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\n# ${tag}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
}

const outOfMemory = (): MachineFaultError =>
  new MachineFaultError('the machine could not evaluate: the reference process ran out of device memory; no verdict', {
    resource: 'device-memory',
    role: 'reference',
    hint: 'wait and try again',
    retryAfterSeconds: 0,
  });

test('a candidate the machine could not evaluate is tried again, and its verdict is its own', async () => {
  let faults = 0;
  const evaluator = new FakeEvaluator({
    judge: (source, request, index) => {
      if (index < 2) {
        faults += 1;
        throw outOfMemory();
      }
      return judgeByMarker(source, request);
    },
  });
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5', 'a'), kernel('incorrect', 'b')] });
  const report = await startOptimizeRun(plan(), { store, model, evaluator });
  assert.equal(report.status, 'finished');
  assert.equal(faults, 2);
  const candidates = await store.listCandidates(report.runId);
  assert.deepEqual(
    candidates.map((candidate) => candidate.evaluation?.result.verdict),
    ['correct', 'incorrect'],
  );
  const events = await store.listEvents(report.runId, { types: ['evaluation-machine-fault'] });
  assert.equal(events.length, 2);
});

test('past its retries a candidate stays unevaluated with the cause, and a resume evaluates it', async () => {
  const failing = new FakeEvaluator({
    judge: () => {
      throw outOfMemory();
    },
  });
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5', 'a'), kernel('correct 0.4', 'b')] });
  const failed = await startOptimizeRun(plan(), { store, model, evaluator: failing }).then(
    () => assert.fail('the run should stop'),
    (error: unknown) => error,
  );
  assert.ok(failed instanceof OptimizeRunError);
  assert.ok(failed.cause instanceof CandidateUnevaluatedError, String(failed.cause));
  assert.equal(failing.calls.length, 3, 'one attempt and two retries');
  const [candidate] = await store.listCandidates(failed.runId);
  assert.equal(candidate!.evaluation, undefined, "no verdict was recorded for the machine's fault");
  const faults = await store.listEvents(failed.runId, { types: ['evaluation-machine-fault'] });
  assert.deepEqual(
    faults.map((event) => (event.payload as { willRetry: boolean }).willRetry),
    [true, true, false],
  );

  const resumed = await resumeOptimizeRun(failed.runId, {
    store,
    model: new FakeKernelModel({ replies: [kernel('correct 0.4', 'b')] }),
    evaluator: new FakeEvaluator(),
  });
  assert.equal(resumed.status, 'finished');
  const evaluated = await store.listCandidates(failed.runId);
  assert.equal(evaluated[0]!.evaluation?.result.verdict, 'correct');
});

test('a reference too slow for its stage at these sizes stops the run at its first try, naming sizes that fit', async () => {
  const tooSlow = new FakeEvaluator({
    judge: () => {
      throw tooSlowFault();
    },
  });
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5', 'a'), kernel('correct 0.4', 'b')] });
  const failed = await startOptimizeRun(plan(), { store, model, evaluator: tooSlow }).then(
    () => assert.fail('the run should stop'),
    (error: unknown) => error,
  );
  assert.ok(failed instanceof OptimizeRunError);
  assert.ok(failed.cause instanceof CandidateUnevaluatedError, String(failed.cause));
  assert.match(
    String((failed.cause as Error).message),
    /could not be evaluated in 1 attempt, .*--set batch_size=2 …; it stays unevaluated; a resume keeps the settings that cannot fit, so start the run again with a longer --timeout-reference/,
  );
  assert.equal(tooSlow.calls.length, 1, 'no retry: the same sizes would only fail again');
  const faults = await store.listEvents(failed.runId, { types: ['evaluation-machine-fault'] });
  assert.deepEqual(
    faults.map((event) => (event.payload as { willRetry: boolean }).willRetry),
    [false],
  );
});
