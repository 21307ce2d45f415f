import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import { fixturePath } from '../../test-support/fixture-paths.js';
import { DetachedProcessLauncher } from './actions/detached-process-launcher.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

let seededStore: SeededTestStore;
let webRoot: string;
let app: ZodApp;
let unbuilt: ZodApp;
let withToken: ZodApp;

before(async () => {
  seededStore = await openSeededTestStore();
  webRoot = await mkdtemp(path.join(tmpdir(), 'kforge-web-'));
  await mkdir(path.join(webRoot, 'assets'));
  await writeFile(
    path.join(webRoot, 'index.html'),
    '<!doctype html><html><head><title>kforge</title><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>',
  );
  await writeFile(path.join(webRoot, 'assets', 'index-abc123.js'), 'console.info("app")');
  app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot });
  unbuilt = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: path.join(webRoot, 'missing') });
  withToken = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot, token: 'a-token-of-sixteen-chars' });
});
after(async () => {
  await app.close();
  await unbuilt.close();
  await withToken.close();
  await seededStore.cleanup();
  await rm(webRoot, { recursive: true, force: true });
});

describe('the web app', () => {
  it('serves index.html at / and at every page URL, with a policy that loads nothing from elsewhere', async () => {
    for (const url of ['/', '/runs/cpu-demo', '/runs/cpu-demo/problems/abc?candidate=3', '/compare/runs?a=x&b=y']) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 200, url);
      assert.match(response.body, /<title>kforge<\/title>/);
      assert.match(String(response.headers['content-security-policy']), /default-src 'self'/);
      assert.equal(response.headers['cache-control'], 'no-cache');
    }
  });

  it("puts the first view's API answers in the page: the runs list at /, a run and the list at /runs/RUN", async () => {
    const embedded = async (server: ZodApp, url: string): Promise<Record<string, unknown> | null> => {
      const body = (await server.inject({ url })).body;
      const block = /<script id="kforge-initial-data" type="application\/json">(.*?)<\/script><\/head>/s.exec(body);
      return block ? (JSON.parse(block[1]!) as Record<string, unknown>) : null;
    };
    const runs = (await app.inject({ url: '/api/runs' })).json<{ runs: Array<{ id: string }> }>();
    assert.deepEqual(await embedded(app, '/'), { '/api/runs': runs }, 'the same answer as the API gives');
    const run = await embedded(app, '/runs/cpu-demo');
    assert.deepEqual(Object.keys(run ?? {}), ['/api/runs/cpu-demo', '/api/runs']);
    assert.equal((run?.['/api/runs/cpu-demo'] as { run: { id: string } } | undefined)?.run.id, 'cpu-demo');
    assert.deepEqual(Object.keys((await embedded(app, '/runs/no-such-run')) ?? {}), ['/api/runs'], 'a 404 is left for the page to ask and show');
    assert.equal(await embedded(app, '/compare/runs?a=cpu-demo&b=h200-demo'), null, 'pages that load their parts on demand get none');
    assert.equal(await embedded(withToken, '/'), null, 'the page is served without the token, so it carries no data');
    assert.equal((await withToken.inject({ url: '/' })).statusCode, 200);
  });

  it('serves hashed assets with a long cache lifetime', async () => {
    const response = await app.inject({ url: '/assets/index-abc123.js' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['cache-control']), /immutable/);
    assert.equal(response.body, 'console.info("app")');
  });

  it('serves files built after it started, and 404s a missing asset instead of sending the page', async () => {
    await writeFile(path.join(webRoot, 'assets', 'later-def456.js'), 'console.info("rebuilt")');
    assert.equal((await app.inject({ url: '/assets/later-def456.js' })).body, 'console.info("rebuilt")');
    const missing = await app.inject({ url: '/assets/gone-000000.js' });
    assert.equal(missing.statusCode, 404);
    assert.doesNotMatch(missing.body, /<title>/);
  });

  it('answers unknown API routes with JSON, not the page', async () => {
    const response = await app.inject({ url: '/api/nothing-here' });
    assert.equal(response.statusCode, 404);
    assert.match(response.json<{ error: { message: string } }>().error.message, /openapi\.json/);
  });

  it('says how to build the app when it is not built', async () => {
    const response = await unbuilt.inject({ url: '/' });
    assert.equal(response.statusCode, 503);
    assert.match(response.body, /bash scripts\/build-web\.sh/);
    assert.equal((await unbuilt.inject({ url: '/api/runs' })).statusCode, 200, 'the API still works');
  });
});

describe('DetachedProcessLauncher', () => {
  it('runs `optimize --resume RUN --store PATH` detached, with its output in a log beside the store', async () => {
    const program = fixturePath('programs', 'print-arguments.mjs');
    const launcher = new DetachedProcessLauncher({
      command: [process.execPath, program],
      cwd: seededStore.folder,
      now: () => new Date('2026-03-02T10:00:00.000Z'),
    });
    const launched = await launcher.resume({ runId: 'h200-demo', storePath: seededStore.storePath });
    assert.equal(launched.logPath, path.join(seededStore.folder, 'logs', 'resume-h200-demo-2026-03-02T10-00-00-000Z.log'));
    assert.ok(launched.pid !== null && launched.pid > 0);
    let text = '';
    for (let attempt = 0; attempt < 100 && !text.includes('\n'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      text = await readFile(launched.logPath, 'utf8');
    }
    const printed = JSON.parse(text) as { argv: string[]; cwd: string };
    assert.deepEqual(printed.argv, ['optimize', '--resume', 'h200-demo', '--store', seededStore.storePath]);
    assert.equal(printed.cwd, seededStore.folder);
  });

  it('rejects when the program cannot be started', async () => {
    const launcher = new DetachedProcessLauncher({ command: [path.join(seededStore.folder, 'no-such-program')], logDirectory: seededStore.folder });
    await assert.rejects(launcher.resume({ runId: 'x', storePath: seededStore.storePath }), /ENOENT/);
  });
});
