import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { SqliteRunStore } from '../../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator } from '../../../../test-support/fake-evaluator.js';
import { FakeKernelModel } from '../../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../../test-support/fixture-paths.js';
import type { OptimizePlanInput } from '../../run/optimize-plan.js';
import { startOptimizeRun } from '../../run/optimize-run.js';
import type { SearchEvent } from '../state/search-events.js';

let folder: string;
let store: SqliteRunStore;
let problemPath: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-refine-'));
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
    strategy: 'refine',
    perProblem: { maxCandidates: 6 },
    total: {},
    evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' },
    stall: { patience: 10, policy: 'continue' },
    model: { provider: 'files', model: 'scripted' },
    outDir: path.join(folder, 'out'),
    candidatesDir: path.join(folder, 'candidates'),
    ...overrides,
  };
}

/** A reply holding a candidate whose outcome the fake evaluator reads from its marker. */
function kernel(marker: string, note = ''): string {
  return `Here is the kernel${note}.\n\n\`\`\`python\nimport torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
}

test('refine turns a build failure into a fix, then a faster kernel, feeding each result back', async () => {
  const model = new FakeKernelModel({
    replies: [
      kernel('compile_error'),
      kernel('correct 0.8', ' (fixed)'),
      'I would use OpenMP here, but no code this time.',
      kernel('correct 0.4', ' (faster)'),
    ],
  });
  const evaluator = new FakeEvaluator();
  const events: SearchEvent[] = [];
  const report = await startOptimizeRun(plan({ perProblem: { maxCandidates: 4 } }), { store, model, evaluator, onEvent: (event) => events.push(event) });

  assert.equal(report.status, 'finished');
  assert.equal(evaluator.calls.length, 3, 'three replies held code');
  const [first, second, third, fourth] = model.calls;
  assert.match(first!.messages[1]!.content, /Write `ModelNew`/);
  assert.match(second!.messages[1]!.content, /did not build/);
  assert.match(second!.messages[1]!.content, /line 12/);
  assert.match(second!.messages[1]!.content, /Fix it/);
  assert.match(third!.messages[1]!.content, /fastest correct candidate so far/);
  assert.match(third!.messages[1]!.content, /speedup 1\.25x/);
  assert.match(fourth!.messages[1]!.content, /Your last reply could not be used: The reply contained no code/);

  const candidates = await store.listCandidates(report.runId);
  assert.deepEqual(
    candidates.map((candidate) => [candidate.round, candidate.parentId, candidate.evaluation?.verdict]),
    [
      [0, null, 'compile_error'],
      [1, candidates[0]!.id, 'correct'],
      [3, candidates[1]!.id, 'correct'],
    ],
  );
  const noCode = await store.listEvents(report.runId, { types: ['reply-without-code'] });
  assert.equal(noCode.length, 1);
  assert.equal(noCode[0]!.payload.parentCandidateId, candidates[1]!.id);

  const problem = report.problems[0]!;
  assert.equal(problem.candidateCount, 3);
  assert.equal(problem.best?.verdict, 'correct');
  assert.equal(problem.best?.candidateId, candidates[2]!.id);
  assert.equal(problem.endReason, 'candidates');
  assert.match(await readFile(problem.best!.kernelPath, 'utf8'), /fake-verdict: correct 0\.4/);
  const verdict = JSON.parse(await readFile(problem.best!.verdictPath, 'utf8')) as { verdict: string; timing: { speedup_vs_eager: number } };
  assert.equal(verdict.verdict, 'correct');
  assert.equal(verdict.timing.speedup_vs_eager, 2.5);
  assert.equal(report.metrics.fastP.find((entry) => entry.p === 2)?.share, 1);
  assert.deepEqual(
    events.filter((event) => event.type === 'best-improved').map((event) => (event.type === 'best-improved' ? event.speedup : null)),
    [1.25, 2.5],
  );
  assert.equal((await store.getRun(report.runId))?.status, 'finished');
});

test('refine stops at the target speedup without spending the rest of the budget', async () => {
  const model = new FakeKernelModel({ replies: [kernel('correct 0.9'), kernel('correct 0.3'), kernel('correct 0.2')] });
  const evaluator = new FakeEvaluator();
  const report = await startOptimizeRun(plan({ perProblem: { maxCandidates: 10, targetSpeedup: 3 } }), { store, model, evaluator });
  assert.equal(model.calls.length, 2);
  assert.equal(report.problems[0]!.endReason, 'target-speedup');
});

test('refine stops when the token budget of the run is spent', async () => {
  const reply = { text: kernel('correct 0.9'), usage: { inputTokens: 600, outputTokens: 400 } };
  const model = new FakeKernelModel({ replies: [reply, reply, reply, reply] });
  const report = await startOptimizeRun(plan({ perProblem: { maxCandidates: 10 }, total: { maxTokens: 2000 } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
  });
  assert.equal(model.calls.length, 2);
  assert.equal(report.problems[0]!.endReason, 'tokens');
  assert.equal(report.totals.tokens, 2000);
});

test('a stall is recorded and, under switch-strategy, hands the problem to ideas', async () => {
  const ideas = '```json\n[{"label": "openmp-rows", "idea": "parallelise rows with OpenMP"}]\n```';
  const model = new FakeKernelModel({
    replies: [kernel('correct 0.5'), kernel('correct 0.6'), kernel('incorrect'), ideas, kernel('correct 0.25'), kernel('correct 0.7')],
  });
  const report = await startOptimizeRun(
    plan({
      perProblem: { maxCandidates: 5 },
      stall: { patience: 2, policy: 'switch-strategy' },
      strategies: { ideas: { ideasPerRound: 1, implementationsPerIdea: 2, fixTurns: 0 } },
    }),
    { store, model, evaluator: new FakeEvaluator() },
  );
  const stalled = await store.listEvents(report.runId, { types: ['problem-stalled', 'strategy-switched'] });
  assert.deepEqual(
    stalled.map((event) => event.type),
    ['problem-stalled', 'strategy-switched'],
  );
  assert.equal(stalled[0]!.payload.candidatesWithoutImprovement, 2);
  assert.equal(stalled[1]!.payload.to, 'ideas');
  const candidates = await store.listCandidates(report.runId);
  assert.equal(candidates[3]!.ideaLabel, 'openmp-rows');
  assert.equal(candidates[3]!.parentId, candidates[0]!.id, 'the idea starts from the fastest correct kernel');
  assert.equal(report.problems[0]!.best?.candidateId, candidates[3]!.id);
});

test('a stall under the pause policy pauses the problem and the run', async () => {
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5'), kernel('correct 0.6'), kernel('correct 0.7'), kernel('correct 0.1')] });
  const report = await startOptimizeRun(plan({ stall: { patience: 2, policy: 'pause' } }), { store, model, evaluator: new FakeEvaluator() });
  assert.equal(model.calls.length, 3);
  assert.equal(report.status, 'paused');
  assert.equal(report.problems[0]!.endReason, 'paused');
  assert.equal((await store.getRun(report.runId))?.status, 'paused');
});
