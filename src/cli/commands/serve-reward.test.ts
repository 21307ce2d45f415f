import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { registerServeCommand } from './serve.js';

let folder: string;
before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-serve-reward-'));
});
after(() => rm(folder, { recursive: true, force: true }));

interface Run {
  url: string | null;
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
  /** The reward evaluators the command opened. */
  rewardEvaluators: Array<FakeEvaluator & { closed: boolean }>;
  stop: () => Promise<void>;
}

/** Runs `kforge serve ARGS` in-process with fake evaluators, until `stop()` (or at once when it fails). */
async function serve(args: string[], environment: NodeJS.ProcessEnv = {}): Promise<Run> {
  const run: Run = { url: null, stdout: '', stderr: '', exitCode: undefined, rewardEvaluators: [], stop: async () => undefined };
  const signals = new EventEmitter();
  const program = new Command().name('kforge').exitOverride();
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (listening = resolve));
  registerServeCommand(program, {
    stdout: { write: (text: string) => (run.stdout += text) },
    stderr: { write: (text: string) => (run.stderr += text) },
    setExitCode: (code) => (run.exitCode = code),
    environment: { KFORGE_LOG_LEVEL: 'silent', ...environment },
    cwd: folder,
    createEvaluator: () => new FakeEvaluator(),
    createRewardEvaluator: () => {
      const evaluator: FakeEvaluator & { closed: boolean; close: () => Promise<void> } = Object.assign(new FakeEvaluator(), {
        closed: false,
        close: async () => {
          evaluator.closed = true;
        },
      });
      run.rewardEvaluators.push(evaluator);
      return evaluator;
    },
    webRoot: null,
    signals: signals as unknown as NodeJS.Process,
    onListening: listening,
    randomToken: () => 'made-up-reward-token-0123456789',
  });
  const finished = program.parseAsync(['serve', ...args], { from: 'user' });
  run.url = await Promise.race([url, finished.then(() => null)]);
  run.stop = async () => {
    signals.emit('SIGINT', 'SIGINT');
    await finished;
  };
  return run;
}

const rewardBody = JSON.stringify({ problem: 'level1/01_relu', candidateSource: '# fake-verdict: correct 0.5\n', backend: 'cpu', shaping: 'binary' });

describe('kforge serve --reward', () => {
  it('serves the reward API behind a made-up token on loopback, leaving the dashboard as it was', async () => {
    const served = await serve(['--store', 'kforge.db', '--port', '0', '--reward']);
    try {
      assert.match(served.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/$/, 'the dashboard URL needs no token on loopback');
      const base = served.url!.replace(/\/$/, '');
      assert.match(served.stderr, new RegExp(`export KFORGE_URL=${base.replace(/[.]/g, '\\.')} KFORGE_TOKEN=made-up-reward-token-0123456789`));
      assert.equal((await fetch(`${base}/api/runs`)).status, 200);
      const refused = await fetch(`${base}/api/reward`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rewardBody });
      assert.equal(refused.status, 401);
      const answered = await fetch(`${base}/api/reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer made-up-reward-token-0123456789' },
        body: rewardBody,
      });
      assert.equal(answered.status, 200);
      assert.equal(((await answered.json()) as { reward: number }).reward, 1);
    } finally {
      await served.stop();
    }
    assert.equal(served.exitCode, 0);
    assert.equal(served.rewardEvaluators.length, 1);
    assert.equal(served.rewardEvaluators[0]?.calls.length, 1, 'the reward request was evaluated by the reward evaluator');
    assert.equal(served.rewardEvaluators[0]?.closed, true, 'the reward evaluator is closed after the server');
  });

  it('uses the token it is given (KFORGE_TOKEN) for the reward API and the dashboard alike', async () => {
    const served = await serve(['--store', 'kforge.db', '--port', '0', '--reward', '--reward-concurrency', '2', '--reward-queue', '0'], {
      KFORGE_TOKEN: 'a-given-token-of-sixteen',
    });
    try {
      assert.match(served.url ?? '', /#token=a-given-token-of-sixteen$/);
      const base = new URL(served.url!).origin;
      assert.equal((await fetch(`${base}/api/runs`)).status, 401);
      const answered = await fetch(`${base}/api/reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-kforge-token': 'a-given-token-of-sixteen' },
        body: rewardBody,
      });
      assert.equal(answered.status, 200);
    } finally {
      await served.stop();
    }
  });

  it('says what to do with malformed reward flags', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--reward', '--reward-concurrency', '0'], /expected `--reward-concurrency` to be a positive integer, got `0`/],
      [['--reward', '--reward-queue', 'many'], /expected `--reward-queue` to be a non-negative integer, got `many`/],
      [['--reward-concurrency', '4'], /need `--reward`/],
    ];
    for (const [args, message] of cases) {
      const failed = await serve(['--store', 'kforge.db', '--port', '0', ...args]);
      assert.equal(failed.url, null, args.join(' '));
      assert.equal(failed.exitCode, 2, args.join(' '));
      assert.match(failed.stderr, message);
      assert.equal(failed.rewardEvaluators.length, 0);
    }
    const short = await serve(['--store', 'kforge.db', '--port', '0', '--reward'], { KFORGE_TOKEN: 'short' });
    assert.equal(short.exitCode, 2);
    assert.match(short.stderr, /KFORGE_TOKEN to be at least 16 characters with `--reward`/);
  });
});
