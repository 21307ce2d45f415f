import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pino, { type Logger } from 'pino';
import { BuildCache } from './build-cache.js';
import { buildKey, buildKeyMaterialOf, type BuildKeyMaterial } from './build-key.js';
import { captureBuild, isSparse, restoreBuild, SPARSE_SLACK_BYTES } from './build-snapshot.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-build-capture-'));
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
function fresh(name: string): string {
  counter += 1;
  return path.join(root, `${name}-${counter}`);
}

/** A build folder with an extension's files (one larger than the 1 MiB copy buffer). */
function honestBuild(): { directory: string; files: Record<string, Buffer> } {
  const directory = fresh('build');
  const files: Record<string, Buffer> = {
    'ext/ext.so': randomBytes(3 * 1024 ** 2 + 12_345),
    'ext/build.ninja': Buffer.from('rule cxx\n'),
    'ext/objects/main.o': randomBytes(70_000),
    'ext/.ninja_log': Buffer.alloc(0),
  };
  for (const [relative, contents] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(directory, relative)), { recursive: true });
    writeFileSync(path.join(directory, relative), contents);
  }
  return { directory, files };
}

/** A file of `bytes` bytes and no blocks (ftruncate past its end). */
function sparseFile(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** Every path under `directory`, relative, sorted. */
function listing(directory: string): string[] {
  return (readdirSync(directory, { recursive: true }) as string[]).sort();
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

/** Warnings a BuildCache logged, as its pino logger wrote them. */
function recordingLogger(): { logger: Logger; warnings: Array<Record<string, unknown>> } {
  const warnings: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  return { logger, warnings };
}

const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

describe('captureBuild: copies by descriptor, streamed, without following a link', () => {
  it('round-trips an honest build: every file, its digest, its contents', async () => {
    const { directory, files } = honestBuild();
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached);
    assert.ok(captured.ok, JSON.stringify(captured));
    assert.deepEqual(Object.keys(captured.files).sort(), Object.keys(files).sort());
    for (const [relative, contents] of Object.entries(files)) {
      assert.equal(captured.files[relative], createHash('sha256').update(contents).digest('hex'), relative);
      assert.ok(readFileSync(path.join(cached, relative)).equals(contents), relative);
    }
    assert.equal(
      captured.sizeBytes,
      Object.values(files).reduce((sum, contents) => sum + contents.length, 0),
    );
    assert.ok(!readdirSync(path.dirname(cached)).some((name) => name.startsWith(`${path.basename(cached)}.tmp-`)), 'no temporary folder left');
    const restored = fresh('restored');
    assert.deepEqual(await restoreBuild(cached, restored, captured.files, null), { ok: true });
    for (const [relative, contents] of Object.entries(files)) assert.ok(readFileSync(path.join(restored, relative)).equals(contents), relative);
  });

  it('refuses a sparse file, and nothing of the build lands in the cache', async () => {
    const { directory } = honestBuild();
    sparseFile(path.join(directory, 'ext', 'padding.bin'), 1024 ** 3);
    assert.ok(isSparse(statSync(path.join(directory, 'ext', 'padding.bin'), { bigint: true })), 'the file system made it sparse');
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached);
    assert.equal(captured.ok, false);
    assert.equal(!captured.ok && captured.why, 'sparse');
    assert.equal(!captured.ok && captured.file, 'ext/padding.bin');
    assert.ok(!existsSync(cached));
    assert.deepEqual(
      readdirSync(path.dirname(cached)).filter((name) => name.startsWith(path.basename(cached))),
      [],
      'no temporary copy is left either',
    );
  });

  it('keeps a small file whatever its blocks (the slack for inline files) and counts a dense one as not sparse', () => {
    assert.equal(isSparse({ size: BigInt(SPARSE_SLACK_BYTES), blocks: 0n }), false);
    assert.equal(isSparse({ size: BigInt(SPARSE_SLACK_BYTES + 1), blocks: 0n }), true);
    assert.equal(isSparse({ size: 10n * 1024n ** 2n, blocks: (10n * 1024n ** 2n) / 512n }), false);
  });

  it('refuses a build past its byte bound before writing past it', async () => {
    const { directory } = honestBuild();
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached, { maxBytes: 1024 ** 2 });
    assert.equal(!captured.ok && captured.why, 'too-large');
    assert.ok(!existsSync(cached));
  });

  it('refuses a folder of too many entries, nested too deep, or with a name it cannot record', async () => {
    const many = fresh('many');
    mkdirSync(many);
    for (let index = 0; index < 20; index += 1) writeFileSync(path.join(many, `f${index}`), 'x');
    assert.equal((await captureBuild(many, fresh('cached'), { maxEntries: 10 })).ok, false);
    const deep = fresh('deep');
    mkdirSync(path.join(deep, 'a', 'b', 'c', 'd'), { recursive: true });
    const outcome = await captureBuild(deep, fresh('cached'), { maxDepth: 2 });
    assert.equal(!outcome.ok && outcome.why, 'too-deep');
    const odd = fresh('odd');
    mkdirSync(odd);
    writeFileSync(path.join(odd, 'a\\b'), 'x');
    const named = await captureBuild(odd, fresh('cached'));
    assert.equal(!named.ok && named.why, 'name', 'a name the entry could not record refuses the build instead of failing its record');
  });

  it('leaves out links to a secret file and folder, and never opens a FIFO (so it cannot hang)', { timeout: 10_000 }, async (t) => {
    const { directory, files } = honestBuild();
    const secrets = fresh('secrets');
    mkdirSync(secrets);
    writeFileSync(path.join(secrets, 'key.txt'), "the orchestrator's key");
    symlinkSync(path.join(secrets, 'key.txt'), path.join(directory, 'ext', 'stolen.txt'));
    symlinkSync(secrets, path.join(directory, 'ext', 'stolen-folder'));
    if (hasMkfifo) assert.equal(spawnSync('mkfifo', [path.join(directory, 'ext', 'pipe')]).status, 0);
    else t.diagnostic('no mkfifo: the FIFO part is left out');
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached);
    assert.ok(captured.ok, JSON.stringify(captured));
    assert.deepEqual(Object.keys(captured.files).sort(), Object.keys(files).sort());
    assert.deepEqual(listing(cached), ['ext', 'ext/.ninja_log', 'ext/build.ninja', 'ext/ext.so', 'ext/objects', 'ext/objects/main.o']);
  });

  it('does not follow a file or a folder swapped for a link after lstat looked at it', async () => {
    const { directory } = honestBuild();
    const secrets = fresh('secrets');
    mkdirSync(path.join(secrets, 'inner'), { recursive: true });
    writeFileSync(path.join(secrets, 'key.txt'), "the orchestrator's key");
    writeFileSync(path.join(secrets, 'inner', 'key.txt'), "the orchestrator's key");
    const swapped: string[] = [];
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached, {
      beforeOpen: (relative) => {
        const at = path.join(directory, relative);
        if (relative === 'ext/build.ninja') {
          unlinkSync(at);
          symlinkSync(path.join(secrets, 'key.txt'), at);
          swapped.push(relative);
        } else if (relative === 'ext/objects') {
          renameSync(at, `${at}.moved`);
          symlinkSync(path.join(secrets, 'inner'), at);
          swapped.push(relative);
        }
      },
    });
    assert.deepEqual(swapped.sort(), ['ext/build.ninja', 'ext/objects']);
    assert.ok(captured.ok, JSON.stringify(captured));
    assert.ok(!('ext/build.ninja' in captured.files), 'the link is left out');
    assert.ok(!Object.keys(captured.files).some((relative) => relative.startsWith('ext/objects/')), 'the linked folder is not walked');
    const everything = listing(cached).filter((relative) => lstatSync(path.join(cached, relative)).isFile());
    for (const relative of everything) assert.notEqual(readFileSync(path.join(cached, relative), 'utf8'), "the orchestrator's key", relative);
  });

  it('does not read a file swapped for a FIFO after lstat looked at it (O_NONBLOCK: no hang)', {
    skip: !hasMkfifo && 'needs mkfifo',
    timeout: 10_000,
  }, async () => {
    const { directory } = honestBuild();
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached, {
      beforeOpen: (relative) => {
        if (relative !== 'ext/build.ninja') return;
        unlinkSync(path.join(directory, relative));
        assert.equal(spawnSync('mkfifo', [path.join(directory, relative)]).status, 0);
      },
    });
    // lstat saw a regular file: the open of the FIFO returns at once (O_NONBLOCK), and fstat turns it away.
    assert.ok(captured.ok, JSON.stringify(captured));
    assert.ok(!('ext/build.ninja' in captured.files));
    assert.ok(!existsSync(path.join(cached, 'ext', 'build.ninja')));
  });

  it('refuses a build folder that is itself a link', async () => {
    const { directory } = honestBuild();
    const link = fresh('link');
    symlinkSync(directory, link);
    const captured = await captureBuild(link, fresh('cached'));
    assert.equal(!captured.ok && captured.why, 'not-a-folder');
  });

  it('removes a restored file that differs from its digest', async () => {
    const { directory } = honestBuild();
    const cached = fresh('cached');
    const captured = await captureBuild(directory, cached);
    assert.ok(captured.ok);
    writeFileSync(path.join(cached, 'ext', 'ext.so'), 'a wrapper');
    const restored = fresh('restored');
    const outcome = await restoreBuild(cached, restored, captured.files, null);
    assert.deepEqual(outcome, { ok: false, file: 'ext/ext.so', why: 'digest' });
    assert.ok(!existsSync(path.join(restored, 'ext', 'ext.so')));
  });
});

describe('BuildCache: the capture waits for the candidate, and keeps the cache within its bounds', () => {
  /** Reserves `source`, writes `bytes` bytes as its build, records it, and releases it. */
  async function use(cache: BuildCache, source: string, bytes: number): Promise<string> {
    const item = material(source);
    const key = buildKey(item);
    const workspace = fresh('workspace');
    mkdirSync(workspace);
    const reservation = await cache.reserve(key, item, { directory: workspace, ownerUid: null });
    if (!reservation.previouslyBuilt) {
      mkdirSync(path.join(workspace, 'ext'));
      writeFileSync(path.join(workspace, 'ext', 'ext.so'), Buffer.alloc(bytes, 1));
    }
    await reservation.finish({ built: true, cacheHit: reservation.previouslyBuilt });
    return key;
  }

  it('copies a new build only at release, holding its key until then; the files written after the build stage count', async () => {
    const directory = fresh('cache');
    const cache = new BuildCache({ directory });
    const item = material('a');
    const key = buildKey(item);
    const workspace = fresh('workspace');
    mkdirSync(path.join(workspace, 'ext'), { recursive: true });
    const reservation = await cache.reserve(key, item, { directory: workspace, ownerUid: null });
    writeFileSync(path.join(workspace, 'ext', 'ext.so'), 'object code');
    await reservation.record({ built: true, cacheHit: false });
    assert.ok(!existsSync(reservation.directory), 'the stable path is taken down when the build ends');
    assert.ok(!existsSync(path.join(directory, key)), 'nothing is copied while the candidate may still run');
    assert.equal((await cache.stats()).inUse, 1, 'the key stays held until the copy');
    writeFileSync(path.join(workspace, 'ext', 'late.txt'), 'written by import-time code');
    await reservation.release();
    assert.deepEqual(listing(path.join(directory, key)), ['ext', 'ext/ext.so', 'ext/late.txt']);
    const stats = await cache.stats();
    assert.deepEqual({ inUse: stats.inUse, builds: stats.builds, uses: stats.uses }, { inUse: 0, builds: 1, uses: 1 });
    await reservation.release();
    assert.equal((await cache.stats()).uses, 1, 'release is idempotent');
  });

  it('frees the key at once when there is nothing to copy (a failed build)', async () => {
    const directory = fresh('cache');
    const cache = new BuildCache({ directory });
    const item = material('f');
    const key = buildKey(item);
    const workspace = fresh('workspace');
    mkdirSync(workspace);
    const reservation = await cache.reserve(key, item, { directory: workspace, ownerUid: null });
    await reservation.record({ built: false, cacheHit: null });
    assert.equal((await cache.stats()).inUse, 0);
    await reservation.release();
    assert.equal((await cache.stats()).uses, 1);
  });

  it('does not cache a build with a sparse file: logged, no entry files, nothing large on disk, no throw', async () => {
    const directory = fresh('cache');
    const { logger, warnings } = recordingLogger();
    const cache = new BuildCache({ directory, logger });
    const item = material('b');
    const key = buildKey(item);
    const workspace = fresh('workspace');
    mkdirSync(path.join(workspace, 'ext'), { recursive: true });
    const reservation = await cache.reserve(key, item, { directory: workspace, ownerUid: null });
    writeFileSync(path.join(workspace, 'ext', 'ext.so'), 'object code');
    sparseFile(path.join(workspace, 'ext', 'huge.bin'), 2_040_109_465);
    await reservation.finish({ built: true, cacheHit: false });
    assert.ok(!existsSync(path.join(directory, key)));
    const entry = JSON.parse(readFileSync(path.join(directory, `${key}.json`), 'utf8'));
    assert.equal(entry.complete, false);
    assert.equal(entry.files, undefined);
    assert.equal(entry.size_bytes, 0);
    assert.ok(
      warnings.some((warning) => warning.why === 'sparse' && warning.file === 'ext/huge.bin'),
      JSON.stringify(warnings),
    );
    const used = spawnSync('du', ['-sk', directory], { encoding: 'utf8' });
    if (used.status === 0) assert.ok(Number(used.stdout.split('\t')[0]) < 1024, `the cache holds ${used.stdout.trim()} KiB`);
    assert.equal((await cache.stats()).totalBytes, 0);
  });

  it('does not cache a build past the bound of one entry', async () => {
    const directory = fresh('cache');
    const cache = new BuildCache({ directory, maxEntryBytes: 1500 });
    const key = await use(cache, 'e', 2000);
    assert.ok(!existsSync(path.join(directory, key)));
    assert.equal(JSON.parse(readFileSync(path.join(directory, `${key}.json`), 'utf8')).complete, false);
    const small = await use(cache, 'd', 1000);
    assert.ok(existsSync(path.join(directory, small, 'ext', 'ext.so')));
  });

  it('evicts least recently used entries to make room for a new build, and skips caching it when held entries leave no room', async () => {
    const directory = fresh('cache');
    let now = Date.parse('2026-12-01T00:00:00Z');
    const cache = new BuildCache({ directory, maxBytes: 2500, now: () => new Date((now += 1000)) });
    const first = await use(cache, '1', 1000);
    const second = await use(cache, '2', 1000);
    const third = await use(cache, '3', 1000);
    assert.ok(!existsSync(path.join(directory, first)), 'the least recently used entry made room');
    assert.ok(existsSync(path.join(directory, second)) && existsSync(path.join(directory, third)));
    assert.equal((await cache.stats()).totalBytes, 2000);

    // Both kept entries are held by evaluations: a new 1000-byte build finds no room.
    const held = await Promise.all(
      ['2', '3'].map((source) => {
        const workspace = fresh('workspace');
        mkdirSync(workspace);
        return cache.reserve(buildKey(material(source)), material(source), { directory: workspace, ownerUid: null });
      }),
    );
    const skipped = await use(cache, '4', 1000);
    assert.ok(!existsSync(path.join(directory, skipped)), 'not cached: no room');
    assert.equal(JSON.parse(readFileSync(path.join(directory, `${skipped}.json`), 'utf8')).complete, false);
    assert.ok(existsSync(path.join(directory, second)) && existsSync(path.join(directory, third)), 'held entries stay');
    for (const reservation of held) await reservation.release();
    assert.ok((await cache.stats()).totalBytes <= 2500);
  });
});
