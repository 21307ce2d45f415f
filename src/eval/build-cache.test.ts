import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { BuildCache } from './build-cache.js';
import { buildKey, buildKeyMaterialOf, type BuildKeyMaterial } from './build-key.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-build-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
const run = promisify(execFile);

let counter = 0;
function freshDirectory(): string {
  counter += 1;
  return path.join(root, `cache-${counter}`);
}

function material(source: string): BuildKeyMaterial {
  return buildKeyMaterialOf({
    sourceSha256: source.repeat(64).slice(0, 64),
    backend: 'cpu',
    environment: { device: 'cpu', torch: '1.13.0', cuda: null, driver: null, python: '3.11.2', cpu: 'Test CPU' },
    compiler: 'c++: test 1.0',
    parentEnvironment: {},
  });
}

/** Reserves, "builds" `bytes` bytes into the folder when it was not built, and finishes. */
async function use(cache: BuildCache, source: string, bytes = 1000): Promise<{ key: string; built: boolean }> {
  const item = material(source);
  const key = buildKey(item);
  const reservation = await cache.reserve(key, item);
  if (!reservation.previouslyBuilt) {
    mkdirSync(path.join(reservation.directory, 'ext'), { recursive: true });
    writeFileSync(path.join(reservation.directory, 'ext', 'ext.so'), Buffer.alloc(bytes));
  }
  await reservation.finish({ built: true, cacheHit: reservation.previouslyBuilt });
  return { key, built: !reservation.previouslyBuilt };
}

describe('BuildCache', () => {
  it('records builds and hits, and reports them in stats', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const cache = new BuildCache({ directory: freshDirectory(), now: () => new Date((now += 1000)) });
    assert.equal((await use(cache, 'a')).built, true);
    assert.equal((await use(cache, 'a')).built, false, 'the second use finds it built');
    await use(cache, 'b', 500);
    const stats = await cache.stats();
    assert.equal(stats.entries, 2);
    assert.equal(stats.totalBytes, 1500);
    assert.equal(stats.uses, 3);
    assert.equal(stats.builds, 2);
    assert.equal(stats.hits, 1);
    assert.equal(stats.inUse, 0);
    assert.equal(stats.oldestUseAt, '2026-12-01T00:00:02.000Z');
    assert.equal(stats.newestUseAt, '2026-12-01T00:00:03.000Z');
  });

  it('evicts the least recently used entries past its bound, never one in use', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const directory = freshDirectory();
    const cache = new BuildCache({ directory, maxBytes: 2500, now: () => new Date((now += 1000)) });
    const first = await use(cache, '1');
    const second = await use(cache, '2');
    await use(cache, '1'); // used again: now the second is the least recently used
    const third = await use(cache, '3');
    assert.ok(existsSync(path.join(directory, first.key)), 'recently used: kept');
    assert.ok(!existsSync(path.join(directory, second.key)), 'least recently used: evicted');
    assert.ok(existsSync(path.join(directory, third.key)));
    assert.equal((await cache.stats()).totalBytes, 2000);

    // The oldest entry is held by an evaluation: eviction passes over it.
    const held = await cache.reserve(first.key, material('1'));
    const tight = new BuildCache({ directory, maxBytes: 0 });
    const evicted = await tight.evict();
    assert.equal(evicted.removed, 1);
    assert.ok(existsSync(held.directory), 'the held entry stays');
    assert.equal((await tight.stats()).inUse, 1);
    await held.finish({ built: true, cacheHit: true });
  });

  it('clears every entry no evaluation holds', async () => {
    const cache = new BuildCache({ directory: freshDirectory() });
    await use(cache, 'e');
    const held = await cache.reserve(buildKey(material('f')), material('f'));
    const cleared = await cache.clear();
    assert.deepEqual(cleared, { removed: 1, freedBytes: 1000, skippedInUse: 1 });
    await held.abandon();
    assert.equal((await cache.clear()).removed, 1, 'the folder of an abandoned reservation is removed too');
    assert.equal((await cache.stats()).entries, 0);
  });

  it("takes over the lock of a process that died, and removes torch's stale baton", async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory, lock: { pollMs: 20 } });
    const item = material('d');
    const key = buildKey(item);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(path.join(directory, key, 'ext'), { recursive: true });
    writeFileSync(path.join(directory, `${key}.lock`), JSON.stringify({ pid: Number(dead.stdout), host: os.hostname(), start: null, token: 'old', acquired_at: new Date().toISOString() }));
    writeFileSync(path.join(directory, key, 'ext', 'lock'), '');
    const reservation = await cache.reserve(key, item);
    assert.ok(!existsSync(path.join(directory, key, 'ext', 'lock')), "torch's baton of the dead build is gone");
    assert.notEqual(JSON.parse(readFileSync(path.join(directory, `${key}.lock`), 'utf8')).token, 'old');
    await reservation.finish({ built: false, cacheHit: null });
    assert.ok(!existsSync(path.join(directory, `${key}.lock`)), 'finish releases the lock');
  });

  it('builds one source once when several processes reserve it at the same time', async () => {
    const directory = freshDirectory();
    const item = material('c');
    const key = buildKey(item);
    const log = path.join(root, 'concurrent.log');
    const script = `
      import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
      import path from 'node:path';
      import { BuildCache } from ${JSON.stringify(path.resolve('src/eval/build-cache.ts'))};
      const cache = new BuildCache({ directory: ${JSON.stringify(directory)}, lock: { pollMs: 20 } });
      const reservation = await cache.reserve(${JSON.stringify(key)}, ${JSON.stringify(item)});
      const built = !reservation.previouslyBuilt;
      if (built) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        mkdirSync(path.join(reservation.directory, 'ext'), { recursive: true });
        writeFileSync(path.join(reservation.directory, 'ext', 'ext.so'), 'object code');
      }
      appendFileSync(${JSON.stringify(log)}, (built ? 'built ' : 'reused ') + process.pid + '\\n');
      await reservation.finish({ built: true, cacheHit: !built });
    `;
    const children = Array.from({ length: 4 }, () =>
      run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 60_000 }),
    );
    await Promise.all(children);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines.filter((line) => line.startsWith('built')).length, 1, `one process builds: ${lines.join('; ')}`);
    const stats = await new BuildCache({ directory }).stats();
    assert.deepEqual({ entries: stats.entries, uses: stats.uses, builds: stats.builds, hits: stats.hits }, { entries: 1, uses: 4, builds: 1, hits: 3 });
  });
});
