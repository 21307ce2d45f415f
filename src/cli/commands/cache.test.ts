import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { BuildCache } from '../../eval/cache/build-cache.js';
import { buildKey, buildKeyMaterialOf } from '../../eval/cache/build-key.js';
import { execa } from 'execa';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { runProgram } from '../run-program.js';
import { registerCacheCommand } from './cache.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-cache-command-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A cache root with two builds (one in use when `hold`) and three baseline files. */
async function seededRoot(name: string): Promise<{ cacheRoot: string; release: () => Promise<void> }> {
  const cacheRoot = path.join(root, name);
  const cache = new BuildCache({ directory: path.join(cacheRoot, 'builds') });
  const held: Array<() => Promise<void>> = [];
  for (const [index, digit] of ['a', 'b'].entries()) {
    const material = buildKeyMaterialOf({
      sourceSha256: digit.repeat(64),
      backend: 'cpu',
      environment: { device: 'cpu', torch: '1.13.0', cuda: null, driver: null },
      compiler: null,
      parentEnvironment: {},
    });
    const workspace = path.join(cacheRoot, 'workspaces', digit);
    mkdirSync(workspace, { recursive: true });
    const reservation = await cache.reserve(buildKey(material), material, { directory: workspace, ownerUid: null });
    mkdirSync(path.join(reservation.directory, 'ext'), { recursive: true });
    writeFileSync(path.join(reservation.directory, 'ext', 'ext.so'), Buffer.alloc(2048));
    if (index === 0) await reservation.finish({ built: true, cacheHit: false });
    else held.push(() => reservation.finish({ built: true, cacheHit: false }));
  }
  mkdirSync(path.join(cacheRoot, 'baselines'), { recursive: true });
  for (const digit of ['1', '2', '3']) writeFileSync(path.join(cacheRoot, 'baselines', `${digit.repeat(64)}.json`), '{"key":"x"}');
  mkdirSync(path.join(cacheRoot, 'compile', 'inductor', 'fxgraph'), { recursive: true });
  writeFileSync(path.join(cacheRoot, 'compile', 'inductor', 'fxgraph', 'entry'), Buffer.alloc(1536));
  return { cacheRoot, release: async () => void (await Promise.all(held.map((finish) => finish()))) };
}

async function kforge(...argv: string[]): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  let stdout = '';
  let stderr = '';
  let exitCode: number | undefined;
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    setExitCode: (code: number) => void (exitCode = code),
    environment: {},
    cwd: root,
    color: false,
  };
  const status = await runProgram(argv, [(program) => registerCacheCommand(program, io)], io);
  return { stdout, stderr, exitCode: status ?? exitCode };
}

describe('kforge cache', () => {
  it('stats: counts, sizes, builds and what is in use, as text and as JSON', async () => {
    const { cacheRoot, release } = await seededRoot('stats');
    try {
      const text = await kforge('cache', 'stats', '--cache-dir', cacheRoot);
      assert.equal(text.exitCode, 0);
      assert.match(text.stdout, /build cache .*builds\n {2}2 entries \(1 in use\) {3}2\.0 KiB of 20\.00 GiB {3}1 uses: 1 builds, 0 hits/);
      assert.match(text.stdout, /baselines .*\n {2}3 entries {3}33 B/);
      assert.match(text.stdout, /torch\.compile .*compile\n {2}1\.5 KiB \(the reference's Inductor and Triton caches\)/);
      const json = JSON.parse((await kforge('cache', 'stats', '--json', '--cache-dir', cacheRoot)).stdout);
      assert.equal(json.root, cacheRoot);
      assert.equal(json.builds.entries, 2);
      assert.equal(json.builds.inUse, 1);
      assert.equal(json.baselines.entries, 3);
      assert.deepEqual(json.compile, { directory: path.join(cacheRoot, 'compile'), totalBytes: 1536 });
    } finally {
      await release();
    }
  });

  it('clear: removes builds, baselines and compile caches, keeps an entry in use, and --only picks one', async () => {
    const { cacheRoot, release } = await seededRoot('clear');
    const onlyBaselines = JSON.parse((await kforge('cache', 'clear', '--only', 'baselines', '--json', '--cache-dir', cacheRoot)).stdout);
    assert.deepEqual(onlyBaselines, { builds: null, baselines: { removed: 3, freedBytes: 33 }, compile: null });
    assert.ok(existsSync(path.join(cacheRoot, 'compile')));
    const cleared = await kforge('cache', 'clear', '--cache-dir', cacheRoot);
    assert.equal(cleared.exitCode, 0);
    assert.match(cleared.stdout, /removed 1 builds, 2\.0 KiB \(1 in use, kept\)/);
    assert.match(cleared.stdout, /removed torch\.compile caches, 1\.5 KiB from .*compile/);
    assert.ok(!existsSync(path.join(cacheRoot, 'compile')));
    await release();
    await kforge('cache', 'clear', '--only', 'builds', '--cache-dir', cacheRoot);
    assert.deepEqual(readdirSync(path.join(cacheRoot, 'builds')), []);
    assert.ok(existsSync(path.join(cacheRoot, 'baselines')));
  });

  it('reports a bad flag value with exit status 2, and an empty cache as empty', async () => {
    const bad = await kforge('cache', 'clear', '--only', 'everything', '--cache-dir', path.join(root, 'none'));
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /expected `--only` to be builds, baselines or compile, got `everything`/);
    const empty = JSON.parse((await kforge('cache', 'stats', '--json', '--cache-dir', path.join(root, 'none'))).stdout);
    assert.equal(empty.builds.entries, 0);
    assert.equal(empty.baselines.entries, 0);
  });

  it('the old name --cache-root still works, with a notice naming --cache-dir', async () => {
    const old = await kforge('cache', 'stats', '--json', '--cache-root', path.join(root, 'none'));
    assert.equal(old.exitCode, 0);
    assert.equal(JSON.parse(old.stdout).root, path.join(root, 'none'));
    assert.match(old.stderr, /`--cache-root` is now `--cache-dir`/);
    assert.doesNotMatch((await kforge('cache', 'stats', '--help')).stdout, /--cache-root/);
  });

  it('kforge eval --cache-dir DIR keeps its builds and baselines where kforge cache --cache-dir DIR finds them', async () => {
    const cacheDir = path.join(root, 'shared-by-eval');
    const evaluation = await execa(
      process.execPath,
      [
        path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'),
        'eval',
        fixturePath('fake-scenarios', 'problem.py'),
        fixturePath('fake-scenarios', 'candidate-correct.py'),
        '--backend',
        'cpu',
        '--cache-dir',
        cacheDir,
        '--json',
      ],
      {
        reject: false,
        cwd: root,
        env: { KFORGE_PYTHON: TEST_PYTHON, KFORGE_WORKER_DIR: fixturePath('fake-worker'), NO_COLOR: '1' },
        timeout: 120_000,
      },
    );
    assert.equal(evaluation.exitCode, 0, evaluation.stderr);
    const stats = JSON.parse((await kforge('cache', 'stats', '--json', '--cache-dir', cacheDir)).stdout);
    assert.equal(stats.root, cacheDir);
    assert.ok(stats.baselines.entries >= 1, JSON.stringify(stats));
    assert.ok(!existsSync(path.join(root, '.kforge')), 'nothing went to the default cache');
  });
});
