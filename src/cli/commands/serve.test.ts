import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { isLoopbackHost, registerServeCommand, serverUrl } from './serve.js';

let seededStore: SeededTestStore;

before(async () => {
  seededStore = await openSeededTestStore('kforge-serve-');
  await seededStore.closeStore();
});
after(() => seededStore.cleanup());

interface Started {
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<number | undefined>;
}

/** Runs `kforge serve ARGS` in-process until `stop()` sends it SIGINT. */
async function startServe(args: string[], extra: { randomToken?: () => string } = {}): Promise<Started> {
  let stdout = '';
  let stderr = '';
  let exitCode: number | undefined;
  const signals = new EventEmitter();
  const program = new Command().name('kforge').exitOverride();
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (listening = resolve));
  registerServeCommand(program, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    setExitCode: (code) => (exitCode = code),
    environment: { KFORGE_LOG_LEVEL: 'silent' },
    cwd: seededStore.folder,
    createEvaluator: () => new FakeEvaluator(),
    webRoot: null,
    signals: signals as unknown as NodeJS.Process,
    onListening: listening,
    ...extra,
  });
  const finished = program.parseAsync(['serve', ...args], { from: 'user' });
  const settled = await Promise.race([url, finished.then(() => null)]);
  if (settled === null) throw new Error(`serve ended early (exit ${exitCode}): ${stderr}`);
  return {
    url: settled,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      signals.emit('SIGINT', 'SIGINT');
      await finished;
      return exitCode;
    },
  };
}

/** Runs `kforge serve ARGS` that is expected to fail at once. */
async function failServe(args: string[]): Promise<{ exitCode: number | undefined; stderr: string }> {
  let stderr = '';
  let exitCode: number | undefined;
  const program = new Command().name('kforge').exitOverride();
  registerServeCommand(program, {
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    setExitCode: (code) => (exitCode = code),
    environment: {},
    cwd: seededStore.folder,
    createEvaluator: () => new FakeEvaluator(),
    webRoot: null,
    signals: new EventEmitter() as unknown as NodeJS.Process,
  });
  await program.parseAsync(['serve', ...args], { from: 'user' });
  return { exitCode, stderr };
}

describe('kforge serve', () => {
  it('serves the store on loopback, prints the URL, and stops cleanly on Ctrl-C', async () => {
    const served = await startServe(['--store', 'kforge.db', '--port', '0']);
    assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.equal(served.stdout(), `${served.url}\n`);
    const body = (await (await fetch(`${served.url}api/runs`)).json()) as { runs: Array<{ id: string }> };
    assert.deepEqual(
      body.runs.map((run) => run.id),
      ['h200-demo', 'cpu-demo'],
    );
    assert.match(served.stderr(), /reading .*kforge\.db; Ctrl-C stops the server/);
    assert.equal(await served.stop(), 0);
    await assert.rejects(fetch(`${served.url}api/runs`));
  });

  it('needs a token when listening beyond loopback, and makes one up when none is given', async () => {
    const served = await startServe(['--store', 'kforge.db', '--host', '0.0.0.0', '--port', '0'], { randomToken: () => 'made-up-token-0123456789' });
    try {
      assert.match(served.url, /^http:\/\/0\.0\.0\.0:\d+\/#token=made-up-token-0123456789$/);
      const port = new URL(served.url).port;
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/runs`)).status, 401);
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/runs`, { headers: { authorization: 'Bearer made-up-token-0123456789' } })).status, 200);
      assert.match(served.stderr(), /API requests need the token/);
    } finally {
      await served.stop();
    }
  });

  it('checks a token it is given on loopback too', async () => {
    const served = await startServe(['--store', 'kforge.db', '--port', '0', '--token', 'a-token-of-sixteen-plus']);
    try {
      assert.match(served.url, /#token=a-token-of-sixteen-plus$/);
      assert.equal((await fetch(new URL('/api/runs', served.url))).status, 401);
    } finally {
      await served.stop();
    }
  });

  it('says what to do when the port is taken, the port is malformed or the token is short', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const busy = await failServe(['--store', 'kforge.db', '--port', String(taken)]);
      assert.equal(busy.exitCode, 2);
      assert.match(busy.stderr, new RegExp(`port ${taken} on 127\\.0\\.0\\.1 is in use: pass --port N`));
    } finally {
      blocker.close();
    }
    const malformed = await failServe(['--port', 'http']);
    assert.deepEqual(
      [malformed.exitCode, malformed.stderr.trim()],
      [2, 'kforge serve: expected `--port` to be a port number from 0 to 65535 (0 picks a free one), got `http`'],
    );
    const short = await failServe(['--token', 'abc']);
    assert.equal(short.exitCode, 2);
    assert.match(short.stderr, /at least 16 characters/);
  });
});

describe('isLoopbackHost and serverUrl', () => {
  it('tell loopback from other addresses and write URLs a browser opens', () => {
    assert.deepEqual(['127.0.0.1', '127.3.2.1', 'localhost', '::1', '[::1]', '0.0.0.0', '192.168.1.4', '::'].map(isLoopbackHost), [
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    assert.equal(serverUrl('::1', 4319), 'http://[::1]:4319/');
    assert.equal(serverUrl('127.0.0.1', 4319, 'a b'), 'http://127.0.0.1:4319/#token=a%20b');
  });
});
