import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeEvaluator, correctResult, judgeByMarker } from '../../test-support/fake-evaluator.js';
import { REPOSITORY_ROOT } from '../core/repository-paths.js';
import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import { sha256Hex } from '../store/content-hash.js';
import { SqliteRunStore } from '../store/sqlite/sqlite-run-store.js';
import { createServer } from './create-server.js';
import { rewardRunId } from './reward/reward-ledger.js';
import type { RewardServerOptions } from './reward/reward-server-options.js';
import type { ZodApp } from './routes/server-context.js';
import { tooSlowFault } from '../../test-support/too-slow-fault.js';

const TOKEN = 'reward-token-'.padEnd(40, 'x');
const AUTH = { authorization: `Bearer ${TOKEN}` };

let folder: string;
let store: SqliteRunStore;
const opened: ZodApp[] = [];

before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-reward-api-'));
  store = await SqliteRunStore.open({ path: path.join(folder, 'kforge.db') });
});
afterEach(async () => {
  for (const app of opened.splice(0)) await app.close();
});
after(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

/** A server on the shared store whose reward API evaluates with a FakeEvaluator (verdicts from `# fake-verdict:` markers). */
async function rewardServer(
  evaluator: FakeEvaluator = new FakeEvaluator(),
  reward: Partial<RewardServerOptions> = {},
): Promise<{ app: ZodApp; evaluator: FakeEvaluator }> {
  const app = await createServer({
    store,
    evaluator: new FakeEvaluator(),
    webRoot: null,
    reward: { evaluator, token: TOKEN, workDirectory: path.join(folder, 'work'), ...reward },
  });
  opened.push(app);
  return { app, evaluator };
}

let unique = 0;
/** A candidate source no other test sends (so the store's cache does not answer it). */
const candidate = (marker: string): string => `# fake-verdict: ${marker}\n# ${++unique} ${Date.now()}\nimport torch\n`;

const post = (app: ZodApp, url: string, payload: unknown, headers: Record<string, string> = AUTH) =>
  app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });
const errorOf = (response: { json: () => unknown }) => (response.json() as { error: { code: string; message: string; field?: string } }).error;

interface RewardBody {
  reward: number;
  verdict: string;
  cached: boolean;
  source: string;
  requestHash: string;
  problemHash: string;
  candidateId: number | null;
  evaluationId: number | null;
  shaping: { name: string; speedup: number | null; tier: number | null; explanation: string };
  result: EvaluationResult;
}

describe('the reward token', () => {
  it('is required on the reward routes even on loopback, where the dashboard needs none', async () => {
    const { app } = await rewardServer();
    const body = { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu' };
    const missing = await post(app, '/api/reward', body, {});
    assert.equal(missing.statusCode, 401);
    assert.equal(errorOf(missing).code, 'token-required');
    const wrong = await post(app, '/api/reward', body, { authorization: `Bearer ${'y'.repeat(40)}` });
    assert.equal(wrong.statusCode, 401);
    assert.equal(errorOf(wrong).code, 'token-invalid');
    assert.equal((await app.inject({ url: '/api/reward/problems' })).statusCode, 401);
    assert.equal((await app.inject({ url: '/api/runs' })).statusCode, 200, 'the dashboard keeps its loopback rule');
    const accepted = await post(app, '/api/reward', body, { 'x-kforge-token': TOKEN });
    assert.equal(accepted.statusCode, 200, accepted.body);
  });
});

describe('validation', () => {
  it('answers 400 naming the field and what to send', async () => {
    const { app, evaluator } = await rewardServer();
    const cases: Array<[unknown, RegExp, string?]> = [
      [{ problem: 'level1/01_relu', backend: 'cpu' }, /candidateSource/, 'body.candidateSource'],
      [{ candidateSource: 'x', backend: 'cpu' }, /`problem`.*`problemSource`/, 'body.problem'],
      [{ problem: 'level1/01_relu', problemSource: 'x', candidateSource: 'x', backend: 'cpu' }, /either `problem` or `problemSource`/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'rocm' }, /backend/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', trials: 0 }, /`trials` to be at least 1/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', perf_trials: 5 }, /perf_trials/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cuda', warmupMs: -1 }, /`warmupMs` to be at least 0/, 'body.warmupMs'],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cuda', warmupMs: 60_000 }, /`warmupMs` to be at most 10000/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cuda', warmupMs: '1s' }, /`warmupMs` to be a number of milliseconds/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', guardPolicy: 'none' }, /guardPolicy/],
      [{ problem: 'level1/01_relu', candidateSource: 'x'.repeat(1024 * 1024 + 1), backend: 'cpu' }, /at most 1 MiB/],
      [{ problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', shaping: 'quadratic' }, /shaping/],
      [
        { problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', shaping: { name: 'binary', params: { failure: 1 } } },
        /below the lowest reward of a correct candidate/,
      ],
      [
        { problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', shaping: { name: 'tiered', params: { penalties: { rejected: 0 } } } },
        /penalty of `rejected`/,
      ],
      [
        { problem: 'level1/01_relu', candidateSource: 'x', backend: 'cpu', shaping: { name: 'log-speedup', params: { lo: 2, hi: 1 } } },
        /`lo` to be below `hi`/,
      ],
    ];
    for (const [body, message, field] of cases) {
      const response = await post(app, '/api/reward', body);
      assert.equal(response.statusCode, 400, `${JSON.stringify(body).slice(0, 120)} → ${response.body.slice(0, 300)}`);
      const error = errorOf(response);
      assert.equal(error.code, 'invalid-request');
      assert.match(error.message, message);
      if (field) assert.equal(error.field, field);
    }
    const tooLarge = await app.inject({
      method: 'POST',
      url: '/api/reward',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: JSON.stringify({ problem: 'level1/01_relu', candidateSource: 'x'.repeat(5 * 1024 * 1024), backend: 'cpu' }),
    });
    assert.equal(tooLarge.statusCode, 413);
    assert.equal(errorOf(tooLarge).code, 'body-too-large');
    assert.match(errorOf(tooLarge).message, /4 MiB limit of POST \/api\/reward/);
    assert.equal(evaluator.calls.length, 0, 'nothing invalid was evaluated');
  });

  it('answers 404 for an unknown problem, pointing at the list of shipped ones', async () => {
    const { app } = await rewardServer();
    for (const problem of ['level1/99_nothing', '../package', 'a'.repeat(64), '/etc/passwd']) {
      const response = await post(app, '/api/reward', { problem, candidateSource: 'x', backend: 'cpu' });
      assert.equal(response.statusCode, 404, problem);
      assert.equal(errorOf(response).code, 'unknown-problem');
      assert.match(errorOf(response).message, /GET \/api\/reward\/problems lists the shipped ones \(e\.g\. level1\/01_relu/);
    }
    const listed = (await app.inject({ url: '/api/reward/problems', headers: AUTH })).json<{ problems: Array<{ name: string; hash: string }> }>();
    const gelu = listed.problems.find((problem) => problem.name === 'level1/02_gelu');
    assert.equal(gelu?.hash, sha256Hex(await readFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py'), 'utf8')));
  });
});

describe('POST /api/reward', () => {
  it("shapes the verdict and speedup, and stores the evaluation in the problem's reward run", async () => {
    const { app } = await rewardServer();
    // The fake times the candidate at 0.5 ms against a 1 ms eager baseline: a 2x speedup.
    const source = candidate('correct 0.5');
    const shaped = async (shaping: unknown) =>
      (await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: source, backend: 'cpu', shaping })).json<RewardBody>();
    const log = await shaped(undefined);
    assert.equal(log.shaping.name, 'log-speedup');
    assert.equal(log.reward, 1);
    assert.equal(log.verdict, 'correct');
    assert.equal(log.result.timing?.speedup_vs_best, 2);
    assert.equal((await shaped('binary')).reward, 1);
    const tiered = await shaped({
      name: 'tiered',
      params: {
        tiers: [
          { speedup: 1, reward: 0.5 },
          { speedup: 3, reward: 2 },
        ],
      },
    });
    assert.deepEqual([tiered.reward, tiered.shaping.tier], [0.5, 0]);

    const runId = rewardRunId('cpu', log.problemHash);
    const run = await store.getRun(runId);
    assert.equal(run?.status, 'paused');
    assert.equal(run?.strategy, 'reward');
    const candidates = await store.listCandidates(runId);
    const stored = candidates.find((entry) => entry.id === log.candidateId);
    assert.equal(stored?.source, source);
    assert.equal(stored?.evaluation?.cacheKey, log.requestHash);
    assert.equal(stored?.evaluation?.id, log.evaluationId);
    const runs = (await app.inject({ url: '/api/runs' })).json<{ runs: Array<{ id: string }> }>();
    assert.ok(
      runs.runs.some((entry) => entry.id === runId),
      'the dashboard lists the reward run',
    );
  });

  it('penalises failures as configured, never above a correct candidate', async () => {
    const { app } = await rewardServer();
    const shaping = { name: 'tiered', params: { failure: -1, penalties: { rejected: -3, compile_error: -0.5 } } };
    const rewardOf = async (marker: string) =>
      (await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate(marker), backend: 'cpu', shaping })).json<RewardBody>().reward;
    assert.equal(await rewardOf('rejected'), -3);
    assert.equal(await rewardOf('compile_error'), -0.5);
    assert.equal(await rewardOf('incorrect'), -1);
    assert.equal(await rewardOf('runtime_error'), -1);
    assert.equal(await rewardOf('correct 4'), 0, 'a correct but slower candidate (0.25x) earns the `slower` reward');
  });

  it('answers an identical request from the store, whatever its shaping, and re-evaluates when an option changes', async () => {
    const { app, evaluator } = await rewardServer();
    const body = { problem: 'level1/02_gelu', candidateSource: candidate('correct 0.5'), backend: 'cpu', trials: 3, perfTrials: 20 };
    const first = (await post(app, '/api/reward', body)).json<RewardBody>();
    assert.deepEqual([first.cached, first.source], [false, 'evaluated']);
    const again = (await post(app, '/api/reward', { ...body, precision: 'fp32', shaping: 'binary' })).json<RewardBody>();
    assert.deepEqual([again.cached, again.source, again.requestHash, again.reward], [true, 'store', first.requestHash, 1]);
    assert.deepEqual(again.result, first.result);
    assert.equal(evaluator.calls.length, 1);

    // A second server on the same store (a restart) finds it there.
    const { app: restarted, evaluator: fresh } = await rewardServer();
    const fromStore = (await post(restarted, '/api/reward', body)).json<RewardBody>();
    assert.deepEqual([fromStore.cached, fromStore.evaluationId], [true, first.evaluationId]);
    assert.equal(fresh.calls.length, 0);

    const changed = (await post(app, '/api/reward', { ...body, trials: 4 })).json<RewardBody>();
    assert.equal(changed.cached, false);
    assert.notEqual(changed.requestHash, first.requestHash);
    assert.equal(evaluator.calls.length, 2);
    assert.equal(evaluator.calls[1]?.request.trials, 4);
  });

  it('shares one evaluation between identical requests in flight', async () => {
    const { app, evaluator } = await rewardServer(new FakeEvaluator({ delayMs: 300 }));
    const body = { problem: 'level1/01_relu', candidateSource: candidate('correct 0.5'), backend: 'cpu' };
    const answers = (await Promise.all([1, 2, 3].map(() => post(app, '/api/reward', body)))).map((response) => response.json<RewardBody>());
    assert.equal(evaluator.calls.length, 1);
    assert.deepEqual(answers.map((answer) => answer.source).sort(), ['evaluated', 'in-flight', 'in-flight']);
    assert.equal(new Set(answers.map((answer) => answer.evaluationId)).size, 1);
  });

  it('evaluates an inline problem, then finds it by its stored hash', async () => {
    const { app, evaluator } = await rewardServer();
    const problemSource = `${await readFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), 'utf8')}\n# inline ${unique}\n`;
    const source = candidate('correct');
    const inline = (await post(app, '/api/reward', { problemSource, problemName: 'my-relu', candidateSource: source, backend: 'cpu' })).json<RewardBody>();
    assert.equal(inline.problemHash, sha256Hex(problemSource));
    assert.equal((await store.getProblem(inline.problemHash))?.name, 'my-relu');
    assert.equal(await readFile(evaluator.calls[0]!.request.problemPath, 'utf8'), problemSource);
    const byHash = (await post(app, '/api/reward', { problem: inline.problemHash, candidateSource: source, backend: 'cpu' })).json<RewardBody>();
    assert.deepEqual([byHash.cached, byHash.requestHash], [true, inline.requestHash]);
  });

  it('sends the default guard policy and the normalised options to the evaluator', async () => {
    const { app, evaluator } = await rewardServer();
    await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu', skipTiming: true, perfTrials: 7 });
    const request = evaluator.calls[0]!.request;
    assert.equal(request.guardPolicy, 'own-kernels', 'the reward API judges by own-kernels unless asked (docs/reward.md)');
    assert.equal(request.skipTiming, true);
    assert.equal(request.perfTrials, undefined, 'timed-call counts mean nothing without timing');
    assert.deepEqual([request.precision, request.tolerance, request.preset, request.trials], ['fp32', 'kernelbench', 'cpu', 5]);
  });

  it('warms up by time as `kforge eval` does on the backend, or as asked, and keys the reward on it', async () => {
    const { app, evaluator } = await rewardServer();
    const source = candidate('correct 0.5');
    const body = { problem: 'level1/01_relu', candidateSource: source, backend: 'cuda' };
    const byDefault = (await post(app, '/api/reward', body)).json<RewardBody>();
    assert.equal(evaluator.calls[0]?.request.warmupMs, 1000, 'the GPU backends warm up for a second unless asked otherwise');
    const spelledOut = (await post(app, '/api/reward', { ...body, warmupMs: 1000 })).json<RewardBody>();
    assert.deepEqual([spelledOut.cached, spelledOut.requestHash], [true, byDefault.requestHash], 'the default spelled out is the same evaluation');
    const none = (await post(app, '/api/reward', { ...body, warmupMs: 0 })).json<RewardBody>();
    assert.equal(none.cached, false, 'a figure timed before the clocks settle is another measurement');
    assert.equal(evaluator.calls[1]?.request.warmupMs, 0);
    await post(app, '/api/reward', { ...body, backend: 'cpu' });
    assert.equal(evaluator.calls[2]?.request.warmupMs, 0, 'cpu clocks do not ramp: no warm-up by time');
    await post(app, '/api/reward', { ...body, candidateSource: candidate('correct'), skipTiming: true, warmupMs: 500 });
    assert.equal(evaluator.calls[3]?.request.warmupMs, undefined, 'no warm-up without timing');
  });

  it('gives a correct candidate without timing the correctness part only', async () => {
    const untimed = (source: string, request: EvaluationRequest): EvaluationResult => {
      const { timing: _timing, ...result } = judgeByMarker(source, request);
      return result;
    };
    const { app } = await rewardServer(new FakeEvaluator({ judge: untimed }));
    const answer = async (shaping: string) =>
      (
        await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate('correct 0.1'), backend: 'cpu', skipTiming: true, shaping })
      ).json<RewardBody>();
    assert.equal((await answer('log-speedup')).reward, 0);
    assert.equal((await answer('tiered')).reward, 0);
    assert.equal((await answer('binary')).reward, 1);
    assert.match((await answer('tiered')).shaping.explanation, /not timed/);
  });

  it('answers 503 with Retry-After when the evaluator fails, and caches nothing', async () => {
    let calls = 0;
    const evaluator = new FakeEvaluator({
      judge: (_source, request) => {
        calls += 1;
        if (calls === 1) throw new Error('python3 cannot import torch');
        return correctResult({ problem: request.problemPath, candidate: request.candidatePath, medianMs: 1 });
      },
    });
    const { app } = await rewardServer(evaluator);
    const body = { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu' };
    const failed = await post(app, '/api/reward', body);
    assert.equal(failed.statusCode, 503);
    assert.equal(errorOf(failed).code, 'evaluation-failed');
    assert.match(errorOf(failed).message, /cannot import torch/);
    assert.ok(Number(failed.headers['retry-after']) >= 1);
    const retried = (await post(app, '/api/reward', body)).json<RewardBody>();
    assert.deepEqual([retried.verdict, retried.cached], ['correct', false]);
  });
});

describe('a problem too slow at these sizes for the reference stage', () => {
  it('answers 422 problem-too-slow, not 503: a retry would only fail again, and nothing is scored', async () => {
    const evaluator = new FakeEvaluator({
      judge: () => {
        throw tooSlowFault();
      },
    });
    const { app } = await rewardServer(evaluator);
    const refused = await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu' });
    assert.equal(refused.statusCode, 422);
    assert.equal(errorOf(refused).code, 'problem-too-slow');
    assert.match(errorOf(refused).message, /whatever the candidate: .*--set batch_size=2 …; evaluate at smaller sizes$/);
    assert.equal(refused.headers['retry-after'], undefined);
  });
});

describe('a problem that cannot be evaluated', () => {
  it("answers 422 and scores nothing: the problem is the caller's, not the candidate's fault", async () => {
    const brokenProblem = (source: string, request: EvaluationRequest): EvaluationResult =>
      source.includes('blame-problem')
        ? {
            ...judgeByMarker('', request),
            verdict: 'invalid_input',
            reasons: [{ check: 'problem-load', message: `the problem file ${request.problemPath} defines no class Model(torch.nn.Module)` }],
            timing: undefined,
            correctness: undefined,
            attribution: undefined,
            shape_geomean: undefined,
          }
        : {
            ...judgeByMarker('', request),
            verdict: 'invalid_input',
            reasons: [{ check: 'load', message: 'the candidate defines no class ModelNew' }],
            timing: undefined,
            correctness: undefined,
            attribution: undefined,
            shape_geomean: undefined,
          };
    const { app } = await rewardServer(new FakeEvaluator({ judge: brokenProblem }));
    const refused = await post(app, '/api/reward', { problemSource: 'x = 1\n', candidateSource: '# blame-problem', backend: 'cpu' });
    assert.equal(refused.statusCode, 422);
    assert.equal(errorOf(refused).code, 'problem-invalid');
    assert.match(errorOf(refused).message, /problem-load.*defines no class Model/);
    const batch = await post(app, '/api/reward/batch', {
      backend: 'cpu',
      items: [
        { problem: 'level1/01_relu', candidateSource: '# fine' },
        { problemSource: 'x = 1\n', candidateSource: '# blame-problem' },
      ],
    });
    assert.equal(batch.statusCode, 422);
    assert.equal(errorOf(batch).field, 'body.items.1.problem');
    const candidateFault = (await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: '# no model', backend: 'cpu' })).json<RewardBody>();
    assert.deepEqual([candidateFault.verdict, candidateFault.reward], ['invalid_input', -1], 'a broken candidate is scored');
  });
});

describe('bounded concurrency', () => {
  it('refuses with 429 and Retry-After once more evaluations would wait than the bound', async () => {
    const { app, evaluator } = await rewardServer(new FakeEvaluator({ delayMs: 400 }), { concurrency: 1, maxWaiting: 1 });
    const send = () => post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu' });
    const running = send();
    const waiting = send();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await send();
    assert.equal(refused.statusCode, 429);
    assert.equal(errorOf(refused).code, 'busy');
    assert.match(errorOf(refused).message, /1 evaluations wait \(at most 1\)/);
    assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After ${refused.headers['retry-after']}`);
    assert.deepEqual([(await running).statusCode, (await waiting).statusCode], [200, 200]);
    assert.equal(evaluator.calls.length, 2, 'the refused request started nothing');
    assert.equal((await send()).statusCode, 200, 'admitted again once the queue drained');
  });

  it('refuses a whole batch that does not fit, starting none of it, but answers cached items regardless', async () => {
    const { app, evaluator } = await rewardServer(new FakeEvaluator({ delayMs: 200 }), { concurrency: 1, maxWaiting: 1 });
    const cachedSource = candidate('correct');
    await post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: cachedSource, backend: 'cpu' });
    const tooMany = await post(app, '/api/reward/batch', {
      problem: 'level1/01_relu',
      backend: 'cpu',
      items: [1, 2, 3].map(() => ({ candidateSource: candidate('correct') })),
    });
    assert.equal(tooMany.statusCode, 400, 'three evaluations can never fit one slot and one waiting place');
    assert.equal(errorOf(tooMany).code, 'batch-too-large');
    const held = post(app, '/api/reward', { problem: 'level1/01_relu', candidateSource: candidate('correct'), backend: 'cpu' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const busy = await post(app, '/api/reward/batch', {
      problem: 'level1/01_relu',
      backend: 'cpu',
      items: [{ candidateSource: candidate('correct') }, { candidateSource: candidate('correct') }],
    });
    assert.equal(busy.statusCode, 429);
    const cachedOnly = await post(app, '/api/reward/batch', {
      problem: 'level1/01_relu',
      backend: 'cpu',
      items: [{ candidateSource: cachedSource }, { candidateSource: cachedSource }],
    });
    assert.equal(cachedOnly.statusCode, 200, 'cache hits need no slot');
    await held;
    assert.equal(evaluator.calls.length, 2);
  });
});

describe('POST /api/reward/batch', () => {
  it('evaluates the items concurrently and answers in request order, one evaluation per distinct item', async () => {
    const { app, evaluator } = await rewardServer(new FakeEvaluator({ delayMs: 100, onePerDevice: false }));
    const markers = ['incorrect', 'correct 0.25', 'rejected', 'compile_error', 'correct 2', 'runtime_error'];
    const sources = markers.map(candidate);
    const items = [...sources.map((candidateSource) => ({ candidateSource })), { candidateSource: sources[1]!, problem: 'level1/01_relu' }];
    const response = await post(app, '/api/reward/batch', { problem: 'level1/01_relu', backend: 'cpu', shaping: 'log-speedup', items });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<{ results: RewardBody[]; evaluated: number; cached: number }>();
    assert.deepEqual(
      body.results.map((result) => result.verdict),
      ['incorrect', 'correct', 'rejected', 'compile_error', 'correct', 'runtime_error', 'correct'],
    );
    assert.deepEqual(
      body.results.map((result) => result.reward),
      [-1, 2, -1, -1, -0.5, -1, 2],
    );
    assert.equal(body.results[6]?.source, 'in-flight', "the duplicate shared its twin's evaluation");
    assert.deepEqual([body.evaluated, body.cached], [6, 1]);
    assert.equal(evaluator.calls.length, 6);
    assert.ok(evaluator.maxConcurrent > 1, 'items were evaluated concurrently');

    const again = (await post(app, '/api/reward/batch', { problem: 'level1/01_relu', backend: 'cpu', items })).json<{
      results: RewardBody[];
      cached: number;
    }>();
    assert.equal(again.cached, 7);
    assert.deepEqual(
      again.results.map((result) => result.requestHash),
      body.results.map((result) => result.requestHash),
    );
  });

  it('validates items and the batch bound, naming the item at fault', async () => {
    const { app } = await rewardServer(undefined, { maxBatch: 3 });
    const noProblem = await post(app, '/api/reward/batch', {
      backend: 'cpu',
      items: [{ candidateSource: 'x', problem: 'level1/01_relu' }, { candidateSource: 'y' }],
    });
    assert.equal(noProblem.statusCode, 400);
    assert.equal(errorOf(noProblem).field, 'body.items.1.problem');
    const unknown = await post(app, '/api/reward/batch', {
      backend: 'cpu',
      items: [
        { candidateSource: 'x', problem: 'level1/01_relu' },
        { candidateSource: 'y', problem: 'level9/nothing' },
      ],
    });
    assert.equal(unknown.statusCode, 404);
    assert.match(errorOf(unknown).message, /^`items\.1`: no shipped problem `level9\/nothing`/);
    const tooLong = await post(app, '/api/reward/batch', {
      problem: 'level1/01_relu',
      backend: 'cpu',
      items: [1, 2, 3, 4].map(() => ({ candidateSource: 'x' })),
    });
    assert.equal(tooLong.statusCode, 400);
    assert.match(errorOf(tooLong).message, /at most 3 items in one batch/);
    const empty = await post(app, '/api/reward/batch', { problem: 'level1/01_relu', backend: 'cpu', items: [] });
    assert.equal(empty.statusCode, 400);
  });
});

describe('the OpenAPI document', () => {
  it('describes the reward routes, their bodies and their token', async () => {
    const { app } = await rewardServer();
    const document = (await app.inject({ url: '/api/openapi.json' })).json<{
      paths: Record<
        string,
        Record<
          string,
          {
            security?: unknown;
            requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
            responses: Record<string, unknown>;
          }
        >
      >;
    }>();
    for (const route of ['/api/reward', '/api/reward/batch']) {
      const operation = document.paths[route]?.post;
      assert.ok(operation, `${route} is in the document`);
      assert.deepEqual(operation.security, [{ token: [] }]);
      assert.ok(operation.responses['429'] && operation.responses['503'], `${route} documents 429 and 503`);
      const properties = operation.requestBody?.content['application/json']?.schema.properties ?? {};
      for (const field of ['backend', 'shaping', 'guardPolicy', 'skipTiming']) assert.ok(field in properties, `${route} documents \`${field}\``);
    }
    assert.ok(document.paths['/api/reward/problems']?.get);
    assert.ok(document.paths['/api/runs'], 'the dashboard routes are still there');
  });

  it('leaves the reward routes out of a server without --reward', async () => {
    const app = await createServer({ store, evaluator: new FakeEvaluator(), webRoot: null });
    try {
      const document = (await app.inject({ url: '/api/openapi.json' })).json<{ paths: Record<string, unknown> }>();
      assert.equal(document.paths['/api/reward'], undefined);
      assert.equal((await post(app, '/api/reward', {})).statusCode, 404);
    } finally {
      await app.close();
    }
  });
});
