import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { startKforgeWorker, type KforgeWorkerProcess } from '../../../test-support/kforge-worker-process.js';
import { redisUnavailable, startTestRedis, type TestRedis } from '../../../test-support/redis-server.js';
import { connectedWorkersBackend } from './optimize.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * `kforge serve --reward --redis URL` as a real process with a real `kforge worker` on the cpu
 * backend: reward requests are evaluated on the worker, not in the server's process, and an
 * identical request is answered from the store.
 */
const PYTHON = TORCH_PYTHON;
const skip = redisUnavailable() || torchUnavailable();
const TOKEN = 'reward-over-redis-token-0123456789';

let folder = '';
let redis: TestRedis | undefined;
let worker: KforgeWorkerProcess | undefined;
let server: ChildProcess | undefined;
let serverLog = '';

before(async () => {
  if (skip) return;
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-serve-redis-'));
  redis = await startTestRedis(path.join(folder, 'redis'));
  const environment = { ...process.env, KFORGE_PYTHON: PYTHON, KFORGE_CACHE_DIR: path.join(folder, 'worker-cache'), KFORGE_LOG_LEVEL: 'warn' };
  worker = startKforgeWorker({ name: 'w1', args: ['--redis', redis.url, '--backend', 'cpu'], environment, cwd: folder });
  await worker.ready;
});

after(async () => {
  server?.kill('SIGTERM');
  await worker?.stop();
  await redis?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function startServer(): Promise<string> {
  const child = spawn(
    process.execPath,
    [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'serve', '--reward', '--redis', redis!.url, '--port', '0', '--store', path.join(folder, 'kforge.db')],
    {
      cwd: folder,
      env: { ...process.env, KFORGE_TOKEN: TOKEN, KFORGE_LOG_LEVEL: 'warn', KFORGE_PYTHON: '/nonexistent/python-the-server-must-not-use' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  server = child;
  child.stderr!.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverLog}`)), 60_000);
    child.stderr!.on('data', () => {
      const found = /export KFORGE_URL=(\S+) /.exec(serverLog);
      if (!found) return;
      clearTimeout(timer);
      resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}):\n${serverLog}`)));
  });
}

test('serve --reward --redis evaluates reward requests on the workers of the queue', { skip, timeout: 8 * 60_000 }, async () => {
  const base = await startServer();
  const body = {
    problemSource: await readFile(fixturePath('problems', 'scale-add.py'), 'utf8'),
    candidateSource: await readFile(fixturePath('candidates', 'scale-add-correct.py'), 'utf8'),
    backend: 'cpu',
    guardPolicy: 'pytorch',
    perfTrials: 10,
    warmupTrials: 2,
    shaping: { name: 'binary' },
  };
  const ask = async (): Promise<{ reward: number; result: { verdict: string }; cached: boolean }> => {
    const response = await fetch(`${base}/api/reward`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, `${await response.clone().text()}\n${serverLog}`);
    return (await response.json()) as { reward: number; result: { verdict: string }; cached: boolean };
  };
  const first = await ask();
  assert.equal(first.result.verdict, 'correct', JSON.stringify(first));
  assert.equal(first.reward, 1);
  assert.equal(first.cached, false);
  assert.match(worker!.stderr, /job \w+ ended: correct/, 'the worker evaluated it (the server has no Python it could use)');
  const second = await ask();
  assert.deepEqual([second.cached, second.reward], [true, 1]);
  assert.equal(await connectedWorkersBackend({ url: redis!.url }), 'cpu', 'kforge optimize --redis would default to the cpu backend the worker serves');
});
