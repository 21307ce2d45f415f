import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
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
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-ideas-'));
  problemPath = path.join(folder, '05_softmax.py');
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '05_softmax.py'), problemPath);
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
    strategy: 'ideas',
    strategies: { ideas: { rounds: 2, ideasPerRound: 2, implementationsPerIdea: 1, fixTurns: 1, width: 1 } },
    perProblem: { maxCandidates: 20 },
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

function ideas(...items: Array<[string, string]>): string {
  return `\`\`\`json\n${JSON.stringify(items.map(([label, idea]) => ({ label, idea })))}\n\`\`\``;
}

test('ideas: k ideas per round, each implemented, failures fixed once, the fastest seeding the next round', async () => {
  let runId = '';
  const pinFirstIdea: FakeStep = async () => {
    const [first] = await store.listIdeas(runId);
    await store.updateIdea(first!.id, { status: 'pinned' });
    return kernel('correct 0.5');
  };
  const model = new FakeKernelModel({
    replies: [
      ideas(['online-softmax', 'one pass with a running max and sum'], ['omp-rows', 'parallelise rows with OpenMP']),
      pinFirstIdea,
      kernel('compile_error'),
      kernel('correct 0.4'),
      ideas(['simd-exp', 'vectorise the exponential']),
      kernel('correct 0.2'),
      kernel('correct 0.45'),
    ],
  });
  const report = await startOptimizeRun(plan(), {
    store,
    model,
    evaluator: new FakeEvaluator(),
    onEvent: (event) => {
      if (event.type === 'run-started') runId = event.runId;
    },
  });

  assert.equal(model.calls.length, 7);
  const roundOneIdeasPrompt = model.calls[4]!.messages[1]!.content;
  assert.match(roundOneIdeasPrompt, /Ideas already tried and how they did/);
  assert.match(roundOneIdeasPrompt, /"omp-rows".*best 2\.50x vs eager/);
  assert.match(roundOneIdeasPrompt, /"online-softmax".*best 2\.00x vs eager/);
  assert.match(roundOneIdeasPrompt, /A good earlier kernel/);
  assert.match(model.calls[3]!.messages[1]!.content, /Fix it/);
  assert.match(model.calls[1]!.messages[1]!.content, /Implement this optimisation idea: one pass with a running max and sum/);

  const candidates = await store.listCandidates(report.runId);
  assert.deepEqual(
    candidates.map((candidate) => [candidate.round, candidate.ideaLabel, candidate.parentId]),
    [
      [0, 'online-softmax', null],
      [0, 'omp-rows', null],
      [0, 'omp-rows', candidates[1]!.id],
      [1, 'simd-exp', candidates[2]!.id],
      [1, 'online-softmax', candidates[2]!.id],
    ],
  );
  assert.equal(report.problems[0]!.best?.candidateId, candidates[3]!.id);
  assert.equal(report.problems[0]!.endReason, 'strategy-finished');
  const proposed = await store.listEvents(report.runId, { types: ['ideas-proposed', 'round-started'] });
  assert.deepEqual(
    proposed.map((event) => [event.type, event.payload.round]),
    [
      ['round-started', 0],
      ['ideas-proposed', 0],
      ['round-started', 1],
      ['ideas-proposed', 1],
    ],
  );
});

test('an unreadable ideas reply falls back to one general idea and is recorded', async () => {
  const model = new FakeKernelModel({ replies: ['I have no particular ideas.', kernel('correct 0.5')] });
  const report = await startOptimizeRun(plan({ strategies: { ideas: { rounds: 1, ideasPerRound: 3, implementationsPerIdea: 1, fixTurns: 0 } } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
  });
  const unreadable = await store.listEvents(report.runId, { types: ['ideas-unreadable'] });
  assert.equal(unreadable.length, 1);
  const [candidate] = await store.listCandidates(report.runId);
  assert.equal(candidate!.ideaLabel, 'general-speedup');
});

test('ideas: an idea dropped while its round runs gets no further implementation or fix', async () => {
  const dropOwnIdea: FakeStep = async (request) => {
    const runs = await store.listRuns();
    const [first] = await store.listIdeas(runs[0]!.id);
    assert.match(request.messages.map((message) => message.content).join('\n'), /tile the rows/);
    await store.recordAction({ runId: runs[0]!.id, type: 'drop-idea', ideaId: first!.id });
    return kernel('incorrect');
  };
  const model = new FakeKernelModel({
    replies: [ideas(['tiles', 'tile the rows'], ['fuse', 'fuse max and sum']), dropOwnIdea, kernel('correct 0.4'), kernel('correct 0.3')],
  });
  const report = await startOptimizeRun(plan({ strategies: { ideas: { rounds: 1, ideasPerRound: 2, implementationsPerIdea: 2, fixTurns: 1, width: 1 } } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
  });
  const candidates = await store.listCandidates(report.runId);
  assert.deepEqual(
    candidates.map((candidate) => candidate.ideaLabel),
    ['tiles', 'fuse', 'fuse'],
    'no fix of the failed implementation and no second implementation of the dropped idea',
  );
  assert.equal(model.calls.length, 4);
});
