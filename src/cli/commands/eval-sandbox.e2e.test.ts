import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync, lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { BuildCache } from '../../eval/cache/build-cache.js';
import { buildKey, buildKeyMaterialOf } from '../../eval/cache/build-key.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * `kforge eval` of attack candidates (tests/adversarial/isolation) through the real parent and
 * workers on the cpu backend, as a user runs it: an orchestrator with an API key in its
 * environment and a project folder as its working directory, the caches and a run store under
 * KFORGE_CACHE_DIR. The attacks aim at what only the parent's wiring protects (the orchestrator's
 * environment and cwd, the baseline and build caches it writes, the store); each must leave the
 * verdict honest and everything outside the candidate's scratch as it was. Then `KFORGE_SANDBOX=0`
 * must say so in the verdict. Pure-Python candidates (no extension is built), judged under the
 * `pytorch` guard policy, which does not require a kernel of their own.
 */
const PYTHON = TORCH_PYTHON;
const skip = torchUnavailable();

const CORPUS = path.join(REPOSITORY_ROOT, 'tests', 'adversarial');
const PROBLEM = path.join(CORPUS, 'problems', 'relu.py');
const SECRET = `sk-kforge-e2e-${createHash('sha256').update(String(process.pid)).digest('hex').slice(0, 12)}`;
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-eval-sandbox-'));
after(() => rmSync(root, { recursive: true, force: true }));
const project = path.join(root, 'project');
const cacheRoot = path.join(root, 'cache');
const scratchRoot = path.join(root, 'scratch');
const candidates = path.join(root, 'candidates');
const store = path.join(cacheRoot, 'kforge.db');
const cwdMarker = `only-in-the-orchestrators-cwd-${process.pid}`;

function digestTree(folder: string): Record<string, string> {
  const digests: Record<string, string> = {};
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(folder, relative))) {
      const child = path.join(relative, name);
      const info = lstatSync(path.join(folder, child));
      if (info.isSymbolicLink()) digests[child] = `link:${readlinkSync(path.join(folder, child))}`;
      else if (info.isDirectory()) walk(child);
      else
        digests[child] = createHash('sha256')
          .update(readFileSync(path.join(folder, child)))
          .digest('hex');
    }
  };
  walk('');
  return digests;
}

/** The attack file with its targets filled in, as tests/adversarial/isolation/manifest.json describes. */
function staged(name: string): string {
  const targets = {
    store,
    marker: path.join(cacheRoot, 'marker.txt'),
    baselines: path.join(cacheRoot, 'baselines'),
    builds: path.join(cacheRoot, 'builds'),
    staging: path.join(cacheRoot, 'staging'),
    compile: path.join(cacheRoot, 'compile'),
  };
  const text = readFileSync(path.join(CORPUS, 'isolation', name), 'utf8').replace(
    'TARGETS = {}  # __KFORGE_TEST_TARGETS__',
    `TARGETS = ${JSON.stringify(targets)}`,
  );
  const file = path.join(candidates, name);
  writeFileSync(file, text);
  return file;
}

async function kforgeEval(candidate: string, extra: Record<string, string> = {}): Promise<{ result: EvaluationResult; printed: string }> {
  const run = await execa(
    process.execPath,
    [
      path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'),
      'eval',
      PROBLEM,
      candidate,
      '--backend',
      'cpu',
      '--trials',
      '2',
      '--perf-trials',
      '5',
      '--warmup',
      '1',
      '--guard-policy',
      'pytorch',
      '--json',
    ],
    {
      reject: false,
      cwd: project,
      extendEnv: false,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/root',
        KFORGE_PYTHON: PYTHON,
        KFORGE_CACHE_DIR: cacheRoot,
        TMPDIR: scratchRoot,
        OPENAI_API_KEY: SECRET,
        NO_COLOR: '1',
        ...extra,
      },
      timeout: 600_000,
    },
  );
  assert.ok(run.exitCode === 0 || run.exitCode === 1, `kforge eval failed to evaluate: ${String(run.stderr).slice(-3000)}`);
  return { result: evaluationResultSchema.parse(JSON.parse(String(run.stdout))), printed: `${String(run.stdout)}\n${String(run.stderr)}` };
}

function helpersAlive(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kforge-escaping-helper');
      } catch {
        return false;
      }
    });
}

describe('kforge eval: attacks on the orchestrator, the caches and the store', { skip }, () => {
  let original: { cache: Record<string, string> };
  let honest: EvaluationResult;

  before(async () => {
    for (const folder of [project, scratchRoot, candidates, path.join(cacheRoot, 'builds')]) mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(project, cwdMarker), '');
    // A run store with one falsifiable row, and a build another candidate left in the cache (through the parent's API).
    spawnSync(PYTHON, [
      '-c',
      `import sqlite3; c = sqlite3.connect(${JSON.stringify(store)}); c.execute("CREATE TABLE candidates (id INTEGER PRIMARY KEY, verdict TEXT, speedup REAL)"); c.execute("INSERT INTO candidates (verdict) VALUES ('incorrect')"); c.commit()`,
    ]);
    const cache = new BuildCache({ directory: path.join(cacheRoot, 'builds') });
    const material = buildKeyMaterialOf({
      sourceSha256: 'e'.repeat(64),
      backend: 'cpu',
      environment: { device: 'cpu', torch: 't', cuda: null, driver: null },
      compiler: null,
      parentEnvironment: {},
    });
    const workspace = path.join(root, 'victim-build');
    mkdirSync(path.join(workspace, 'victim_ext'), { recursive: true });
    writeFileSync(path.join(workspace, 'victim_ext', 'victim_ext.so'), "the victim's object code");
    const reservation = await cache.reserve(buildKey(material), material, { directory: workspace, ownerUid: null });
    await reservation.finish({ built: true, cacheHit: false });
    // The reference's torch.compile caches, as a torch 2.x reference worker leaves them.
    mkdirSync(path.join(cacheRoot, 'compile', 'inductor', 'fxgraph', 'ab'), { recursive: true });
    writeFileSync(path.join(cacheRoot, 'compile', 'inductor', 'fxgraph', 'ab', 'entry'), 'an honest compiled graph');
    // An honest candidate first: its evaluation measures and caches the baselines the attacks go for.
    honest = (await kforgeEval(path.join(CORPUS, 'cpu', 'h18_scratch_file.py'))).result;
    assert.equal(honest.verdict, 'correct', JSON.stringify(honest.reasons));
    original = { cache: digestTree(cacheRoot) };
  });

  for (const name of [
    'p02_orchestrator_secrets.py',
    'p04_escaping_helper.py',
    's03_baseline_cache.py',
    's04_build_cache.py',
    's05_store.py',
    's06_compile_cache.py',
  ]) {
    it(`${name}: the verdict stays honest and nothing outside the scratch changes`, { timeout: 600_000 }, async () => {
      const { result, printed } = await kforgeEval(staged(name));
      assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
      assert.ok(!printed.includes(SECRET), "the orchestrator's API key never reaches anything the candidate printed");
      assert.ok(!printed.includes(cwdMarker), 'nor does a name in its working directory');
      const isolation = result.environment?.isolation as { missing: string[]; namespaces: string[]; seccomp: boolean } | undefined;
      assert.deepEqual(isolation?.missing, [], JSON.stringify(isolation));
      assert.ok(isolation?.namespaces.includes('pid') && isolation.seccomp);
      await new Promise((resolve) => setTimeout(resolve, 1000)); // a surviving helper writes every 0.25 s
      assert.deepEqual(helpersAlive(), [], 'no helper outlives the evaluation');
      const now = digestTree(cacheRoot);
      for (const [file, digest] of Object.entries(original.cache)) assert.equal(now[file], digest, `${file} is byte for byte as it was`);
      for (const file of Object.keys(now).filter((name) => !(name in original.cache))) {
        // Only the parent's record of the attacker's own (empty: pure Python) build is new.
        assert.match(file, /^builds\/[0-9a-f]{64}\.json$/);
        assert.deepEqual(JSON.parse(readFileSync(path.join(cacheRoot, file), 'utf8')).files, {});
      }
    });
  }

  it("a later evaluation reuses the untouched baselines and the victim's verified build", { timeout: 600_000 }, async () => {
    const { result } = await kforgeEval(path.join(CORPUS, 'cpu', 'h18_scratch_file.py'));
    assert.equal(result.verdict, 'correct');
    assert.equal(result.timing?.baseline_cached, true);
    const anchor = result.timing?.baseline_anchor;
    if (anchor?.used === 'anchor') {
      // A host too busy for eager re-timed beside the candidate to agree with the cache: the speedups
      // use the re-timing, and the cached figure it was compared with must still be the honest one.
      assert.ok(anchor.drift > -0.9, `the cached eager figure is not inflated 20x: re-timing drift ${anchor.drift}`);
    } else {
      assert.equal(result.timing?.eager_ms?.median, honest.timing?.eager_ms?.median, 'the same cached eager baseline, not one inflated 20x');
    }
    const cache = new BuildCache({ directory: path.join(cacheRoot, 'builds') });
    const material = buildKeyMaterialOf({
      sourceSha256: 'e'.repeat(64),
      backend: 'cpu',
      environment: { device: 'cpu', torch: 't', cuda: null, driver: null },
      compiler: null,
      parentEnvironment: {},
    });
    const target = path.join(root, 'victim-again');
    mkdirSync(target);
    const reservation = await cache.reserve(buildKey(material), material, { directory: target, ownerUid: null });
    assert.equal(reservation.previouslyBuilt, true, 'the entry still matches its digests');
    assert.equal(readFileSync(path.join(target, 'victim_ext', 'victim_ext.so'), 'utf8'), "the victim's object code");
    await reservation.abandon();
  });

  it("brings a sandboxed candidate's profile back into KFORGE_WORKER_PROFILE (its own /tmp is private)", { timeout: 600_000 }, async () => {
    const profiles = path.join(root, 'profiles');
    const { result } = await kforgeEval(path.join(CORPUS, 'cpu', 'h18_scratch_file.py'), { KFORGE_WORKER_PROFILE: profiles });
    assert.equal(result.verdict, 'correct');
    assert.equal((result.environment?.isolation as { enabled: boolean } | undefined)?.enabled, true);
    const written = readdirSync(profiles);
    for (const role of ['candidate', 'reference']) {
      assert.ok(
        written.some((name) => name.startsWith(`${role}-`) && name.endsWith('.summary.txt')),
        `the ${role} worker's summary is in ${JSON.stringify(written)}`,
      );
    }
  });

  it('with KFORGE_SANDBOX=0 every verdict says the candidate ran without isolation', { timeout: 600_000 }, async () => {
    const { result } = await kforgeEval(path.join(CORPUS, 'cpu', 'h18_scratch_file.py'), { KFORGE_SANDBOX: '0' });
    assert.equal(result.verdict, 'correct');
    const isolation = result.environment?.isolation as { enabled: boolean } | undefined;
    assert.equal(isolation?.enabled, false);
    const notes = (result.guard?.notes as string[] | undefined) ?? [];
    assert.ok(
      notes.some((note) => note.includes('without isolation')),
      JSON.stringify(notes),
    );
  });
});
