import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixturePath } from '../../test-support/fixture-paths.js';
import { REPOSITORY_ROOT } from '../core/repository-paths.js';
import { sha256Hex } from '../store/content-hash.js';
import { rewardRunId } from './reward/reward-ledger.js';
import { TORCH_PYTHON, torchUnavailable } from '../../test-support/torch-python.js';

/**
 * `kforge serve --reward` as a real process on the cpu backend, with the real Python worker,
 * driven by the Python client (`clients/python/kforge_reward.py`) under /usr/bin/python3 (or
 * KFORGE_PYTHON). The candidates are plain PyTorch, so nothing is compiled.
 */
const PYTHON = TORCH_PYTHON;
const skip = torchUnavailable();

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-reward-e2e-'));
let server: ChildProcess | undefined;
let base = '';
let token = '';
let stderr = '';

/** Starts the server and waits for its URL and its `export KFORGE_URL=… KFORGE_TOKEN=…` line. */
async function startServer(): Promise<void> {
  const child = spawn(
    process.execPath,
    [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'serve', '--reward', '--port', '0', '--store', path.join(root, 'kforge.db'), '--reward-concurrency', '4'],
    {
      cwd: root,
      env: { ...process.env, KFORGE_PYTHON: PYTHON, KFORGE_CACHE_DIR: path.join(root, 'cache'), KFORGE_LOG_LEVEL: 'warn', KFORGE_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  server = child;
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${stderr}`)), 120_000);
    const check = (): void => {
      const found = /export KFORGE_URL=(\S+) KFORGE_TOKEN=(\S+)/.exec(stderr);
      if (!found) return;
      [base, token] = [found[1]!, found[2]!];
      clearTimeout(timer);
      resolve();
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
  });
}

/** Runs a Python snippet with the client importable and the server's address in the environment; returns its JSON on stdout. */
function runClient(script: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', script], {
      env: { ...process.env, PYTHONPATH: path.join(REPOSITORY_ROOT, 'clients', 'python'), KFORGE_URL: base, KFORGE_TOKEN: token, FIXTURES: fixturePath() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`python exited ${code}: ${err}\nserver: ${stderr}`))));
  });
}

const CLIENT_SCRIPT = String.raw`
import json, os
import kforge_reward as kr

fixtures = os.environ["FIXTURES"]
read = lambda *parts: open(os.path.join(fixtures, *parts)).read()
problem = read("problems", "scale-add.py")
correct = read("candidates", "scale-add-correct.py")
options = dict(backend="cpu", perf_trials=12, warmup_trials=2, guard_policy="pytorch")
fence = chr(96) * 3
shaping = {"name": "log-speedup", "params": {"penalties": {"rejected": -2, "invalid_input": -1.5}}}

out = {"problems": [p["name"] for p in kr.RewardClient().problems()]}
first = kr.evaluate(problem, correct, shaping="binary", **options)
out["first"] = {k: first[k] for k in ("reward", "verdict", "cached", "source", "requestHash", "candidateId")}
out["first"]["trials"] = first["result"]["correctness"]["trials"]
# The calls made, from the timing budget: candidate_ms.n counts the parent's trusted batches instead
# when the in-process median fell below their bound (a loaded machine), so it is not the call count.
out["first"]["timed_calls"] = first["result"]["timing"]["budget"]["requested_calls"]
batch = kr.evaluate_batch(problem, [correct, read("candidates", "scale-add-incorrect.py"), read("candidates", "syntax-error.py"), read("candidates", "cheats-when-timed.py")], shaping=shaping, **options)
out["batch"] = [{k: entry[k] for k in ("reward", "verdict", "source", "requestHash")} | {"checks": [r["check"] for r in entry["result"]["reasons"]], "speedup": entry["shaping"]["speedup"]} for entry in batch]
default_policy = kr.evaluate(problem, correct, shaping=shaping, **{**options, "guard_policy": None})
out["default_policy"] = {"verdict": default_policy["verdict"], "reward": default_policy["reward"], "checks": [r["check"] for r in default_policy["result"]["reasons"]]}
again = kr.evaluate(problem, correct, shaping="binary", **options)
out["again"] = {k: again[k] for k in ("reward", "cached", "source", "requestHash")}
func = kr.make_reward_func(problem, shaping="binary", **options)
out["trl"] = func(prompts=["write it"], completions=[[{"role": "assistant", "content": "Here it is:\n" + fence + "python\n" + correct + fence}]])
try:
    kr.reward("level1/99_missing", correct, **options)
except kr.KforgeHTTPError as error:
    out["missing"] = {"status": error.status, "code": error.code}
try:
    kr.reward("import torch\n# no Model here\n", correct, **options)
except kr.KforgeHTTPError as error:
    out["broken_problem"] = {"status": error.status, "code": error.code, "message": error.message}
try:
    kr.reward(problem, correct, token="not-the-token-at-all", retries=0, **options)
except kr.KforgeHTTPError as error:
    out["bad_token"] = {"status": error.status, "code": error.code}
print(json.dumps(out))
`;

interface ClientOutput {
  problems: string[];
  first: { reward: number; verdict: string; cached: boolean; source: string; requestHash: string; candidateId: number; trials: number; timed_calls: number };
  batch: Array<{ reward: number; verdict: string; source: string; requestHash: string; checks: string[]; speedup: number | null }>;
  default_policy: { verdict: string; reward: number; checks: string[] };
  again: { reward: number; cached: boolean; source: string; requestHash: string };
  trl: number[];
  missing: { status: number; code: string };
  broken_problem: { status: number; code: string; message: string };
  bad_token: { status: number; code: string };
}

describe('kforge serve --reward with the Python client, end to end on the cpu backend', { skip, timeout: 900_000 }, () => {
  before(startServer, { timeout: 150_000 });
  after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGINT');
      await new Promise((resolve) => server!.once('exit', resolve));
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('rewards honest, wrong, broken and cheating candidates, answers repeats from the store, and shows them in the dashboard', {
    timeout: 900_000,
  }, async () => {
    const out = (await runClient(CLIENT_SCRIPT)) as ClientOutput;
    assert.ok(out.problems.includes('level1/02_gelu'), `shipped problems: ${out.problems.join(', ')}`);

    assert.deepEqual([out.first.verdict, out.first.reward, out.first.cached, out.first.source], ['correct', 1, false, 'evaluated']);
    assert.deepEqual([out.first.trials, out.first.timed_calls], [5, 12], 'the options reached the evaluator');

    const [honest, wrong, broken, cheat] = out.batch;
    assert.equal(honest?.source, 'store', 'the batch found the first evaluation in the store');
    assert.equal(honest?.requestHash, out.first.requestHash);
    assert.equal(honest?.verdict, 'correct');
    assert.ok(honest!.speedup! > 0);
    assert.ok(honest!.reward >= -0.5 && honest!.reward <= 3);
    assert.deepEqual([wrong?.verdict, wrong?.reward], ['incorrect', -1]);
    assert.deepEqual([broken?.verdict, broken?.reward], ['invalid_input', -1.5]);
    assert.equal(cheat?.verdict, 'rejected', `the phase-detecting candidate: ${JSON.stringify(cheat)}`);
    assert.equal(cheat?.reward, -2);

    assert.equal(out.default_policy.verdict, 'rejected', 'the default guard policy rejects torch compute in forward');
    assert.equal(out.default_policy.reward, -2);

    assert.deepEqual(out.again, { reward: 1, cached: true, source: 'store', requestHash: out.first.requestHash });
    assert.deepEqual(out.trl, [1]);
    assert.deepEqual(out.missing, { status: 404, code: 'unknown-problem' });
    assert.deepEqual(out.bad_token, { status: 401, code: 'token-invalid' });
    assert.deepEqual([out.broken_problem.status, out.broken_problem.code], [422, 'problem-invalid']);
    assert.match(out.broken_problem.message, /problem-load/);

    const runs = (await (await fetch(`${base}/api/runs`)).json()) as {
      runs: Array<{ id: string; strategy: string; totals: { evaluated: number; correct: number } }>;
    };
    const scaleAdd = runs.runs.find((run) => run.id === rewardRunId('cpu', sha256Hex(readFileSync(fixturePath('problems', 'scale-add.py'), 'utf8'))));
    assert.equal(scaleAdd?.strategy, 'reward', "the problem's reward run is in the dashboard");
    assert.deepEqual([scaleAdd.totals.evaluated, scaleAdd.totals.correct], [5, 1]);
    assert.equal(runs.runs.filter((run) => run.strategy === 'reward').length, 2, "and the broken problem's, with its one evaluation");
  });
});
