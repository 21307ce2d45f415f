import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator, judgeByMarker } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel, type FakeStep } from '../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import type { OptimizePlanInput } from './optimize-plan.js';
import { resumeOptimizeRun, startOptimizeRun } from './optimize-run.js';
import { toJsonOutput } from '../report/run-report.js';
import type { SearchEvent } from '../search/state/search-events.js';

let folder: string;
let store: SqliteRunStore;
let problems: string[];

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-run-'));
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
    perProblem: { maxCandidates: 4 },
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

test('a run stopped during an evaluation resumes without losing or repeating any evaluation', async () => {
  const controller = new AbortController();
  const first = new FakeEvaluator({
    judge: (source, request, index) => {
      if (index === 2) {
        controller.abort();
        throw new Error('the evaluation was cancelled');
      }
      return judgeByMarker(source, request);
    },
  });
  const model = new FakeKernelModel({
    replies: [kernel('compile_error', 'a'), kernel('correct 0.8', 'b'), kernel('correct 0.5', 'c'), kernel('correct 0.1', 'never asked')],
  });
  const stopped = await startOptimizeRun(plan(), { store, model, evaluator: first, signal: controller.signal });
  assert.equal(stopped.status, 'stopped');
  assert.equal((await store.getRun(stopped.runId))?.status, 'stopped');
  assert.equal(model.calls.length, 3);
  assert.deepEqual(
    (await store.pendingWork(stopped.runId)).map((candidate) => candidate.round),
    [2],
  );
  assert.equal((await store.listEvents(stopped.runId, { types: ['problem-finished'] })).length, 0);

  const second = new FakeEvaluator();
  const resumedModel = new FakeKernelModel({ replies: [kernel('correct 0.3', 'd')] });
  const resumed = await resumeOptimizeRun(stopped.runId, { store, model: resumedModel, evaluator: second });

  assert.equal(resumed.status, 'finished');
  assert.deepEqual(
    second.calls.map((call) => /# (\w)\n/.exec(call.source)?.[1]),
    ['c', 'd'],
    'the pending candidate first, nothing evaluated twice',
  );
  assert.equal(resumedModel.calls.length, 1, 'the budget counts the three candidates of the first session');
  const candidates = await store.listCandidates(stopped.runId);
  assert.equal(candidates.length, 4);
  assert.ok(candidates.every((candidate) => candidate.evaluation !== undefined));
  assert.match(resumedModel.calls[0]!.messages[1]!.content, new RegExp(`fastest correct candidate so far \\(#${candidates[2]!.id}\\)`));
  assert.equal(candidates[3]!.parentId, candidates[2]!.id);
  assert.equal(resumed.problems[0]!.candidateCount, 4);
  assert.equal(resumed.problems[0]!.best?.candidateId, candidates[3]!.id);
});

test('a stop during a model call records nothing for that call', async () => {
  const controller = new AbortController();
  const stopWhileAsking: FakeStep = (request) => {
    controller.abort();
    request.signal?.throwIfAborted();
    return kernel('correct 0.1');
  };
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5'), stopWhileAsking] });
  const report = await startOptimizeRun(plan(), { store, model, evaluator: new FakeEvaluator(), signal: controller.signal });
  assert.equal(report.status, 'stopped');
  assert.equal((await store.listModelCalls(report.runId)).length, 1);
  assert.equal((await store.listCandidates(report.runId)).length, 1);
});

test('a suite runs every problem, writes each best kernel, and a finished problem is skipped on resume', async () => {
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5', 'relu'), kernel('incorrect', 'gelu')] });
  const report = await startOptimizeRun(plan({ problems, perProblem: { maxCandidates: 1 } }), { store, model, evaluator: new FakeEvaluator() });
  assert.deepEqual(
    report.problems.map((problem) => [problem.name, problem.best?.verdict]),
    [
      ['01_relu', 'correct'],
      ['02_gelu', 'incorrect'],
    ],
  );
  assert.equal(report.metrics.correctShare, 0.5);
  assert.deepEqual(
    report.metrics.fastP.map((entry) => entry.share),
    [0.5, 0.5, 0.5, 0],
  );
  const json = toJsonOutput(report);
  assert.deepEqual(Object.keys(json), ['run_id', 'problems']);
  assert.deepEqual(Object.keys(json.problems[0]!), ['problem', 'candidate_count', 'best']);
  assert.equal(json.problems[0]!.best?.path, path.join(folder, 'out', '01_relu.py'));
  assert.equal(json.problems[1]!.best?.timing, null);

  const again = new FakeKernelModel({ replies: [] });
  const resumed = await resumeOptimizeRun(report.runId, { store, model: again, evaluator: new FakeEvaluator() });
  assert.equal(again.calls.length, 0);
  assert.equal(resumed.problems[0]!.best?.verdict, 'correct');
});

test('a candidate whose source was already evaluated reuses that evaluation', async () => {
  const evaluator = new FakeEvaluator();
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5', 'same'), kernel('correct 0.5', 'same')] });
  const report = await startOptimizeRun(plan({ perProblem: { maxCandidates: 2 } }), { store, model, evaluator });
  assert.equal(evaluator.calls.length, 1);
  const candidates = await store.listCandidates(report.runId);
  assert.equal(candidates[1]!.evaluation?.reusedFromEvaluationId, candidates[0]!.evaluation?.id);
});

test('an edited problem file is evaluated from the stored source on resume', async () => {
  const controller = new AbortController();
  const model = new FakeKernelModel({
    replies: [
      () => {
        controller.abort();
        return kernel('correct 0.5');
      },
    ],
  });
  const stopped = await startOptimizeRun(plan(), { store, model, evaluator: new FakeEvaluator(), signal: controller.signal });
  await writeFile(problems[0]!, '# edited by hand\n', 'utf8');
  const evaluator = new FakeEvaluator();
  await resumeOptimizeRun(stopped.runId, { store, model: new FakeKernelModel({ replies: [kernel('correct 0.4')] }), evaluator });
  assert.notEqual(evaluator.calls[0]!.request.problemPath, problems[0]);
  assert.match(evaluator.calls[0]!.request.problemPath, /problems\/01_relu-[0-9a-f]{8}\.py$/);
});

/** What the progress events say about each candidate: problem, store id, number, and the candidate count then. */
function numbering(events: readonly SearchEvent[], type: 'candidate-submitted' | 'candidate-evaluated'): Array<[string, number, number, number]> {
  return events.flatMap((event) =>
    event.type === type ? [[event.problem, event.candidateId, event.candidateNumber, event.usage.candidates] as [string, number, number, number]] : [],
  );
}

test("progress events number each problem's candidates from 1, as its candidate count does, whatever their store ids", async () => {
  const events: SearchEvent[] = [];
  const model = new FakeKernelModel({
    replies: [kernel('compile_error', 'relu-a'), kernel('correct 0.5', 'relu-b'), 'I would rather not write code.', kernel('correct 0.4', 'gelu-b')],
  });
  const report = await startOptimizeRun(plan({ problems, perProblem: { maxCandidates: 2 } }), {
    store,
    model,
    evaluator: new FakeEvaluator(),
    onEvent: (event) => events.push(event),
  });
  const ids = (await store.listCandidates(report.runId)).map((candidate) => candidate.id);
  assert.equal(ids.length, 3);
  assert.deepEqual(numbering(events, 'candidate-evaluated'), [
    ['01_relu', ids[0]!, 1, 1],
    ['01_relu', ids[1]!, 2, 2],
    // 02_gelu's first reply held no code: it took number 1, as it took a slot of --max-candidates.
    ['02_gelu', ids[2]!, 2, 2],
  ]);
  assert.deepEqual(numbering(events, 'candidate-submitted'), numbering(events, 'candidate-evaluated'), 'each candidate is announced before its evaluation');
});

test('a replay that runs out ends the problem with model-exhausted, not a failed model call', async () => {
  const events: SearchEvent[] = [];
  const model = new FakeKernelModel({ replies: [kernel('runtime_error', 'only')] });
  const report = await startOptimizeRun(plan(), { store, model, evaluator: new FakeEvaluator(), onEvent: (event) => events.push(event) });
  assert.equal(report.status, 'finished');
  const types = events.map((event) => event.type);
  assert.ok(types.includes('model-exhausted'), types.join(' '));
  assert.ok(!types.includes('model-call-failed'), types.join(' '));
  const finished = events.find((event) => event.type === 'problem-finished');
  assert.equal(finished?.type === 'problem-finished' && finished.reason, 'model-exhausted');
});

test('a resumed problem numbers its pending candidate and its new ones after those of the first session', async () => {
  const controller = new AbortController();
  const stopOnSecond = new FakeEvaluator({
    judge: (source, request, index) => {
      if (index === 1) {
        controller.abort();
        throw new Error('the evaluation was cancelled');
      }
      return judgeByMarker(source, request);
    },
  });
  const first = new FakeKernelModel({ replies: [kernel('correct 0.8', 'a'), kernel('correct 0.5', 'b')] });
  const stopped = await startOptimizeRun(plan(), { store, model: first, evaluator: stopOnSecond, signal: controller.signal });
  assert.equal(stopped.status, 'stopped');
  const events: SearchEvent[] = [];
  const again = new FakeKernelModel({ replies: [kernel('correct 0.3', 'c')] });
  await resumeOptimizeRun(stopped.runId, { store, model: again, evaluator: new FakeEvaluator(), onEvent: (event) => events.push(event) });
  const ids = (await store.listCandidates(stopped.runId)).map((candidate) => candidate.id);
  assert.deepEqual(
    numbering(events, 'candidate-evaluated').map(([, id, number]) => [id, number]),
    [
      [ids[1]!, 2],
      [ids[2]!, 3],
    ],
  );
});
