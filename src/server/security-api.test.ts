import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import { hostNameOf } from './http/request-guard.js';
import type { ZodApp } from './routes/server-context.js';

const TOKEN = 'k'.repeat(40);
let seededStore: SeededTestStore;
let webRoot: string;
let loopback: ZodApp;
let exposed: ZodApp;

before(async () => {
  seededStore = await openSeededTestStore();
  webRoot = await mkdtemp(path.join(tmpdir(), 'kforge-web-'));
  await writeFile(path.join(webRoot, 'index.html'), '<!doctype html><title>kforge</title>');
  loopback = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot });
  exposed = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot, token: TOKEN, allowedHostNames: [] });
});
after(async () => {
  await loopback.close();
  await exposed.close();
  await seededStore.cleanup();
  await rm(webRoot, { recursive: true, force: true });
});

describe('the token', () => {
  it('is required on every API route when set', async () => {
    const response = await exposed.inject({ url: '/api/runs', headers: { host: '10.0.0.5:4319' } });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json<{ error: { code: string } }>().error.code, 'token-required');
    const post = await exposed.inject({ method: 'POST', url: '/api/runs/cpu-demo/hints', headers: { host: '10.0.0.5:4319' }, payload: { note: 'x' } });
    assert.equal(post.statusCode, 401);
    assert.equal((await seededStore.store.listActions('cpu-demo', { types: ['hint'] })).length, 1, 'nothing was recorded');
  });

  it('is refused when wrong', async () => {
    const response = await exposed.inject({ url: '/api/runs', headers: { authorization: `Bearer ${'x'.repeat(40)}` } });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json<{ error: { code: string } }>().error.code, 'token-invalid');
  });

  it('is accepted as a bearer header, an x-kforge-token header or a token query parameter', async () => {
    assert.equal((await exposed.inject({ url: '/api/runs', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 200);
    assert.equal((await exposed.inject({ url: '/api/runs', headers: { 'x-kforge-token': TOKEN } })).statusCode, 200);
    assert.equal((await exposed.inject({ url: `/api/runs/cpu-demo/report?format=csv&token=${TOKEN}` })).statusCode, 200);
  });

  it('is not needed for the page itself, which holds no data', async () => {
    const page = await exposed.inject({ url: '/runs/cpu-demo', headers: { host: 'dashboard.lan:4319' } });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>kforge<\/title>/);
  });

  it('is reported by /api/health', async () => {
    const body = (await exposed.inject({ url: '/api/health', headers: { authorization: `Bearer ${TOKEN}` } })).json<{ tokenRequired: boolean }>();
    assert.equal(body.tokenRequired, true);
  });
});

describe('on loopback without a token', () => {
  it('answers only to loopback host names (no DNS rebinding)', async () => {
    for (const host of ['127.0.0.1:4319', 'localhost:4319', '[::1]:4319']) {
      assert.equal((await loopback.inject({ url: '/api/health', headers: { host } })).statusCode, 200, host);
    }
    const rebound = await loopback.inject({ url: '/api/runs', headers: { host: 'evil.example:4319' } });
    assert.equal(rebound.statusCode, 403);
    assert.equal(rebound.json<{ error: { code: string } }>().error.code, 'forbidden-host');
  });

  it('refuses writes from a page of another origin', async () => {
    const response = await loopback.inject({
      method: 'POST',
      url: '/api/runs/cpu-demo/hints',
      headers: { host: '127.0.0.1:4319', origin: 'http://evil.example' },
      payload: { note: 'x' },
    });
    assert.equal(response.statusCode, 403);
    const own = await loopback.inject({
      method: 'POST',
      url: '/api/runs/cpu-demo/hints',
      headers: { host: '127.0.0.1:4319', origin: 'http://127.0.0.1:4319' },
      payload: { note: 'from the page' },
    });
    assert.equal(own.statusCode, 201);
  });

  it('refuses a body that is not JSON', async () => {
    const response = await loopback.inject({
      method: 'POST',
      url: '/api/runs/cpu-demo/hints',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'note=x',
    });
    assert.equal(response.statusCode, 415);
  });
});

describe('hostNameOf', () => {
  it('drops the port, keeping IPv6 brackets', () => {
    assert.deepEqual(['127.0.0.1:80', 'LOCALHOST', '[::1]:4319', 'example.com:8080'].map(hostNameOf), ['127.0.0.1', 'localhost', '[::1]', 'example.com']);
  });
});
