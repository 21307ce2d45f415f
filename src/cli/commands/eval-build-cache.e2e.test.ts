import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { BuildCache } from '../../eval/cache/build-cache.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { compilerUnavailable, TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * `kforge eval` twice on one C++ candidate in one KFORGE_CACHE_DIR, through the real worker on the
 * cpu backend (KFORGE_PYTHON, else /usr/bin/python3): the second run reuses the first one's build.
 * One extension is built (about 45 s on a 2-core machine).
 */
const PYTHON = TORCH_PYTHON;
const skip = torchUnavailable() || compilerUnavailable();

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-eval-build-cache-'));
after(() => rmSync(root, { recursive: true, force: true }));
const cacheDirectory = path.join(root, 'cache');
const scratchRoot = path.join(root, 'scratch');
mkdirSync(scratchRoot);

const PROBLEM = path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py');
const CANDIDATE = path.join(REPOSITORY_ROOT, 'examples', 'level1_02_gelu', 'cpu_fast.py');

/** The verdict and the command's stderr (its warnings say why a cached build was not reused). */
async function kforgeEval(): Promise<{ result: EvaluationResult; stderr: string }> {
  const run = await execa(
    process.execPath,
    [
      path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'),
      'eval',
      PROBLEM,
      CANDIDATE,
      '--backend',
      'cpu',
      '--trials',
      '2',
      '--perf-trials',
      '10',
      '--warmup',
      '2',
      '--json',
    ],
    { reject: false, cwd: root, env: { KFORGE_PYTHON: PYTHON, KFORGE_CACHE_DIR: cacheDirectory, TMPDIR: scratchRoot, NO_COLOR: '1' }, timeout: 400_000 },
  );
  assert.equal(run.exitCode, 0, String(run.stderr));
  const result = evaluationResultSchema.parse(JSON.parse(String(run.stdout)));
  assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
  return { result, stderr: String(run.stderr) };
}

/** Processes whose working directory lies under `root` (the workers run in scratch directories there). */
function processesUnder(directory: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`).startsWith(directory);
      } catch {
        return false;
      }
    });
}

describe('kforge eval: the build cache', { skip }, () => {
  it('reuses the build of the same candidate in the same KFORGE_CACHE_DIR, and leaves no worker behind', { timeout: 900_000 }, async () => {
    const first = await kforgeEval();
    const second = await kforgeEval();
    const [firstBuildMs, secondBuildMs] = [first.result.stages?.build ?? Number.NaN, second.result.stages?.build ?? Number.NaN];
    const entries = readdirSync(path.join(cacheDirectory, 'builds')).filter((name) => name.endsWith('.json'));
    const why = `\nfirst run's stderr:\n${first.stderr}\nsecond run's stderr:\n${second.stderr}\ncache entries: ${entries
      .map((name) => readFileSync(path.join(cacheDirectory, 'builds', name), 'utf8'))
      .join('\n')}`;
    assert.ok(firstBuildMs > 10_000, `the first run compiled (its build took ${firstBuildMs} ms)${why}`);
    assert.ok(secondBuildMs < 5_000, `the second run reused the build (its build took ${secondBuildMs} ms)${why}`);
    const stats = await new BuildCache({ directory: path.join(cacheDirectory, 'builds') }).stats();
    assert.deepEqual({ entries: stats.entries, uses: stats.uses, builds: stats.builds, hits: stats.hits }, { entries: 1, uses: 2, builds: 1, hits: 1 });
    assert.deepEqual(processesUnder(scratchRoot), [], 'no worker outlives kforge eval');
  });
});
