import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
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

/** A fresh candidate build folder (what a scratch directory's `build` is). */
function workspace(ownerUid: number | null = null): { directory: string; ownerUid: number | null } {
  counter += 1;
  const directory = path.join(root, `workspace-${counter}`);
  mkdirSync(directory, { recursive: true });
  return { directory, ownerUid };
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
  const reservation = await cache.reserve(key, item, workspace());
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
    const held = await cache.reserve(first.key, material('1'), workspace());
    const tight = new BuildCache({ directory, maxBytes: 0 });
    const evicted = await tight.evict();
    assert.equal(evicted.removed, 1);
    assert.ok(existsSync(path.join(directory, first.key)), 'the held entry stays');
    assert.equal((await tight.stats()).inUse, 1);
    await held.finish({ built: true, cacheHit: true });
  });

  it('clears every entry no evaluation holds', async () => {
    const cache = new BuildCache({ directory: freshDirectory() });
    await use(cache, 'e');
    const held = await cache.reserve(buildKey(material('f')), material('f'), workspace());
    const cleared = await cache.clear();
    assert.deepEqual(cleared, { removed: 1, freedBytes: 1000, skippedInUse: 1 });
    await held.abandon();
    assert.equal((await cache.clear()).removed, 0, 'an abandoned reservation left nothing in the cache');
    assert.equal((await cache.stats()).entries, 0);
  });

  it("takes over the lock of a process that died, and never copies torch's baton into the cache", async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory, lock: { pollMs: 20 } });
    const item = material('d');
    const key = buildKey(item);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      path.join(directory, `${key}.lock`),
      JSON.stringify({ pid: Number(dead.stdout), host: os.hostname(), start: null, token: 'old', acquired_at: new Date().toISOString() }),
    );
    const reservation = await cache.reserve(key, item, workspace());
    assert.notEqual(JSON.parse(readFileSync(path.join(directory, `${key}.lock`), 'utf8')).token, 'old');
    mkdirSync(path.join(reservation.directory, 'ext'), { recursive: true });
    writeFileSync(path.join(reservation.directory, 'ext', 'ext.so'), 'object code');
    writeFileSync(path.join(reservation.directory, 'ext', 'lock'), '');
    await reservation.finish({ built: true, cacheHit: false });
    assert.ok(!existsSync(path.join(directory, `${key}.lock`)), 'finish releases the lock');
    assert.ok(existsSync(path.join(directory, key, 'ext', 'ext.so')));
    assert.ok(!existsSync(path.join(directory, key, 'ext', 'lock')), "torch's baton is not part of the build");
  });

  it('gives the candidate a verified copy in its own folder, at a stable path, and copies a new build back with digests', async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory });
    const item = material('4');
    const key = buildKey(item);
    const first = workspace();
    const reservation = await cache.reserve(key, item, first);
    assert.equal(reservation.directory, path.join(cache.stagingDirectory, key));
    assert.equal(readlinkSync(reservation.directory), first.directory, "the stable path leads to the candidate's own folder");
    mkdirSync(path.join(first.directory, 'ext'));
    writeFileSync(path.join(first.directory, 'ext', 'ext.so'), 'object code');
    utimesSync(path.join(first.directory, 'ext', 'ext.so'), 1_700_000_000, 1_700_000_000.25);
    await reservation.finish({ built: true, cacheHit: false });
    assert.ok(!existsSync(reservation.directory), 'the stable path is unlinked once the build is over');
    const entry = JSON.parse(readFileSync(path.join(directory, `${key}.json`), 'utf8'));
    assert.deepEqual(Object.keys(entry.files), ['ext/ext.so']);
    assert.equal(entry.files['ext/ext.so'], createHash('sha256').update('object code').digest('hex'));

    const second = workspace();
    const again = await cache.reserve(key, item, second);
    assert.equal(again.previouslyBuilt, true);
    assert.equal(again.directory, reservation.directory, 'the same path as the first build, so ninja finds its records');
    const copy = path.join(second.directory, 'ext', 'ext.so');
    assert.equal(readFileSync(copy, 'utf8'), 'object code');
    assert.equal(Math.round(statSync(copy).mtimeMs), 1_700_000_000_250, 'the modification time is kept');
    await again.finish({ built: true, cacheHit: true });
  });

  it('drops an entry whose files differ from their digests (a replaced .so) and lets the candidate build again', async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory });
    const item = material('5');
    const key = buildKey(item);
    await use(cache, '5');
    writeFileSync(path.join(directory, key, 'ext', 'ext.so'), 'a wrapper that runs code of someone else');
    const target = workspace();
    const reservation = await cache.reserve(key, item, target);
    assert.equal(reservation.previouslyBuilt, false, 'a tampered entry is a miss');
    assert.ok(!existsSync(path.join(target.directory, 'ext', 'ext.so')), 'nothing of it reaches the candidate');
    assert.ok(!existsSync(path.join(directory, key)), 'the tampered folder is removed');
    await reservation.abandon();
  });

  it('never reuses an entry without digests (written by a candidate, before builds were copied)', async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory });
    const item = material('6');
    const key = buildKey(item);
    mkdirSync(path.join(directory, key, 'ext'), { recursive: true });
    writeFileSync(path.join(directory, key, 'ext', 'ext.so'), 'unverified');
    const { files: _files, ...legacy } = {
      key,
      material: item,
      created_at: '2026-12-01T00:00:00Z',
      last_used_at: '2026-12-01T00:00:00Z',
      size_bytes: 10,
      uses: 1,
      builds: 1,
      hits: 0,
      complete: true,
      files: undefined,
    };
    writeFileSync(path.join(directory, `${key}.json`), JSON.stringify(legacy));
    const target = workspace();
    const reservation = await cache.reserve(key, item, target);
    assert.equal(reservation.previouslyBuilt, false);
    assert.ok(!existsSync(path.join(target.directory, 'ext')));
    await reservation.abandon();
  });

  it("copies regular files only: a link to a secret in the candidate's folder is not followed", async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory });
    const item = material('7');
    const key = buildKey(item);
    const secret = path.join(root, 'secret.txt');
    writeFileSync(secret, "the orchestrator's key");
    const folder = workspace();
    const reservation = await cache.reserve(key, item, folder);
    mkdirSync(path.join(folder.directory, 'ext'));
    writeFileSync(path.join(folder.directory, 'ext', 'ext.so'), 'object code');
    symlinkSync(secret, path.join(folder.directory, 'ext', 'stolen.txt'));
    await reservation.finish({ built: true, cacheHit: false });
    assert.ok(!existsSync(path.join(directory, key, 'ext', 'stolen.txt')));
    assert.ok(lstatSync(path.join(directory, key, 'ext', 'ext.so')).isFile());
  });

  it("gives the copies to the candidate's uid when kforge runs as root", { skip: process.getuid?.() === 0 ? false : 'needs root (chown)' }, async () => {
    const directory = freshDirectory();
    const cache = new BuildCache({ directory });
    await use(cache, '8');
    const item = material('8');
    const target = workspace(61234);
    const reservation = await cache.reserve(buildKey(item), item, target);
    assert.equal(statSync(path.join(target.directory, 'ext', 'ext.so')).uid, 61234);
    assert.equal(statSync(path.join(target.directory, 'ext')).uid, 61234);
    await reservation.abandon();
  });

  it('builds one source once when several processes reserve it at the same time', async () => {
    const directory = freshDirectory();
    const item = material('c');
    const key = buildKey(item);
    const log = path.join(root, 'concurrent.log');
    const script = `
      import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
      import path from 'node:path';
      import { BuildCache } from ${JSON.stringify(path.resolve('src/eval/cache/build-cache.ts'))};
      const cache = new BuildCache({ directory: ${JSON.stringify(directory)}, lock: { pollMs: 20 } });
      const folder = ${JSON.stringify(root)} + '/concurrent-' + process.pid;
      mkdirSync(folder, { recursive: true });
      const reservation = await cache.reserve(${JSON.stringify(key)}, ${JSON.stringify(item)}, { directory: folder, ownerUid: null });
      const built = !reservation.previouslyBuilt;
      if (built) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        mkdirSync(path.join(reservation.directory, 'ext'), { recursive: true });
        writeFileSync(path.join(reservation.directory, 'ext', 'ext.so'), 'object code');
      }
      appendFileSync(${JSON.stringify(log)}, (built ? 'built ' : 'reused ') + process.pid + '\\n');
      await reservation.finish({ built: true, cacheHit: !built });
    `;
    const children = Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 60_000 }));
    await Promise.all(children);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines.filter((line) => line.startsWith('built')).length, 1, `one process builds: ${lines.join('; ')}`);
    const stats = await new BuildCache({ directory }).stats();
    assert.deepEqual({ entries: stats.entries, uses: stats.uses, builds: stats.builds, hits: stats.hits }, { entries: 1, uses: 4, builds: 1, hits: 3 });
  });
});
