import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, test } from 'node:test';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel } from '../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import type { OptimizePlanInput } from './optimize-plan.js';
import { resumeOptimizeRun, startOptimizeRun } from './optimize-run.js';
import { EDIT_CLAIMED_EVENT, HINT_APPLIED_EVENT, STOP_ACKNOWLEDGED_EVENT } from './run-interventions.js';

let folder: string;
let store: SqliteRunStore;
let problems: string[];

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-interventions-'));
  problems = [];
  for (const name of ['01_relu.py', '02_gelu.py']) {
    problems.push(path.join(folder, name));
    await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', name), path.join(folder, name));
  }
  store = await SqliteRunStore.open({ path: path.join(folder, 'kforge.db') });
});

afterEach(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

function plan(overrides: Partial<OptimizePlanInput> = {}): OptimizePlanInput {
  return {
    version: 1,
    problems: [problems[0]!],
    strategy: 'refine',
    perProblem: { maxCandidates: 3 },
    total: {},
    evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' },
    stall: { patience: 50, policy: 'continue' },
    model: { provider: 'files', model: 'scripted' },
    outDir: path.join(folder, 'out'),
    candidatesDir: path.join(folder, 'candidates'),
    ...overrides,
  };
}

function kernel(marker: string, tag = ''): string {
  return `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\n# ${tag}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
}

/** Waits until `check` holds (the run polls its actions every 10 ms here); fails after 5 s. */
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

async function onlyRunId(): Promise<string> {
  const runs = await store.listRuns();
  assert.equal(runs.length, 1);
  return runs[0]!.id;
}

test('a stop action recorded by another process ends the run as stopped, resumable, within a poll', async () => {
  const model = new FakeKernelModel({
    replies: [
      kernel('correct 0.8', 'a'),
      async (request) => {
        const runId = await onlyRunId();
        await store.recordAction({ runId, type: 'stop' });
        await until(() => request.signal?.aborted === true, 'the run to stop');
        request.signal!.throwIfAborted();
        return kernel('correct 0.1', 'never recorded');
      },
    ],
  });
  const report = await startOptimizeRun(plan(), { store, model, evaluator: new FakeEvaluator(), actionPollMs: 10 });
  assert.equal(report.status, 'stopped');
  assert.equal((await store.getRun(report.runId))?.status, 'stopped');
  assert.equal((await store.listEvents(report.runId, { types: [STOP_ACKNOWLEDGED_EVENT] })).length, 1);
  assert.equal((await store.listCandidates(report.runId)).length, 1, 'the interrupted call stored nothing');

  const resumed = await resumeOptimizeRun(report.runId, {
    store,
    model: new FakeKernelModel({ replies: [kernel('correct 0.5', 'b'), kernel('correct 0.4', 'c')] }),
    evaluator: new FakeEvaluator(),
    actionPollMs: 10,
  });
  assert.equal(resumed.status, 'finished', 'the old stop action is history to a resumed run');
  assert.equal((await store.listCandidates(report.runId)).length, 3);
});

test('a hint recorded while the run goes on is in the next prompt of its problem, a run-wide one in every problem', async () => {
  let runId = '';
  let problemHash = '';
  const model = new FakeKernelModel({
    replies: [
      async () => {
        runId = await onlyRunId();
        problemHash = (await store.listRunProblems(runId))[0]!.hash;
        await store.recordAction({ runId, type: 'hint', problemHash, note: 'use float4 loads' });
        await until(async () => (await store.listEvents(runId, { types: [HINT_APPLIED_EVENT] })).length === 1, 'the hint to be applied');
        return kernel('correct 0.8', 'a');
      },
      async () => {
        await store.recordAction({ runId, type: 'hint', note: 'keep the kernel under 100 lines' });
        await until(async () => (await store.listEvents(runId, { types: [HINT_APPLIED_EVENT] })).length === 2, 'the run-wide hint to be applied');
        return kernel('correct 0.7', 'b');
      },
      kernel('correct 0.6', 'gelu'),
    ],
  });
  await startOptimizeRun(plan({ problems, perProblem: { maxCandidates: 2 }, total: { maxCandidates: 3 } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
    actionPollMs: 10,
  });
  const prompts = model.calls.map((call) => call.messages.map((message) => message.content).join('\n'));
  assert.doesNotMatch(prompts[0]!, /float4/);
  assert.match(prompts[1]!, /use float4 loads/);
  assert.doesNotMatch(prompts[1]!, /100 lines/);
  assert.match(prompts[2]!, /keep the kernel under 100 lines/, 'the second problem starts with the run-wide hint');
  assert.doesNotMatch(prompts[2]!, /float4/, 'a problem hint stays with its problem');
  const applied = await store.listEvents(runId, { types: [HINT_APPLIED_EVENT] });
  assert.deepEqual(
    applied.map((event) => event.payload.liveProblems),
    [[problemHash], [problemHash]],
  );
});

test('a person’s edit made during the run is evaluated through the run’s queue and the search builds on it', async () => {
  let humanId = 0;
  const evaluator = new FakeEvaluator();
  const model = new FakeKernelModel({
    replies: [
      kernel('correct 0.8', 'model-1'),
      async () => {
        const runId = await onlyRunId();
        const [first] = await store.listCandidates(runId);
        const edited = await store.addCandidate({
          runId,
          problemHash: first!.problemHash,
          parentId: first!.id,
          round: first!.round + 1,
          ideaId: null,
          source: kernel('correct 0.2', 'human').replace(/```(python)?\n/g, ''),
          origin: 'human',
        });
        humanId = edited.id;
        await store.recordAction({ runId, type: 'edit-candidate', candidateId: edited.id, note: 'unrolled by hand' });
        await until(async () => (await store.getCandidate(edited.id))?.evaluation !== undefined, 'the edit to be evaluated');
        return kernel('correct 0.5', 'model-2');
      },
      kernel('correct 0.4', 'model-3'),
    ],
  });
  const report = await startOptimizeRun(plan(), { store, model, evaluator, actionPollMs: 10 });
  assert.equal(report.status, 'finished');
  assert.ok(
    evaluator.calls.some((call) => call.source.includes('# human')),
    'the run evaluated the edit itself',
  );
  const claims = await store.listEvents(report.runId, { types: [EDIT_CLAIMED_EVENT] });
  assert.deepEqual(
    claims.map((event) => [event.payload.candidateId, event.payload.live]),
    [[humanId, true]],
  );
  assert.match(
    model.calls[2]!.messages[1]!.content,
    new RegExp(`fastest correct candidate so far \\(#${humanId}\\)`),
    'the next turn refines the faster human kernel',
  );
  const candidates = await store.listCandidates(report.runId);
  assert.equal(candidates.at(-1)!.parentId, humanId);
  assert.equal(report.problems[0]!.best?.candidateId, humanId);
});
