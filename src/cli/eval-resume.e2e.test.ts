import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fixturePath } from '../../test-support/fixture-paths.js';
import { kforgeWithFakeWorker } from '../../test-support/kforge-cli.js';

/**
 * A batch stopped part-way and finished by the same command (`--resume FILE`), as a user whose
 * batch at KernelBench's sizes ran out of time would do: the real CLI and its pipeline on the cpu
 * backend, with the fake worker (test-support/fixtures/fake-worker) acting both roles, so no torch
 * is needed. The slow candidate's correctness trials take 8 s: the run is interrupted (SIGINT)
 * once the first result is in the file (the quick one's, unless the slow one took the device first).
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-eval-resume-'));
after(() => rmSync(root, { recursive: true, force: true }));

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');
const SLOW = fixturePath('fake-scenarios', 'candidate-slow-correctness.py');
const QUICK = fixturePath('fake-scenarios', 'candidate-correct.py');
const RESULTS = path.join(root, 'results.jsonl');

function kforgeEval() {
  return kforgeWithFakeWorker(root, ['eval', `${PROBLEM}:${QUICK}`, `${PROBLEM}:${SLOW}`, '--backend', 'cpu', '--json', '--resume', RESULTS], {
    KFORGE_CACHE_DIR: path.join(root, 'cache'),
  });
}

const keptLines = (): Array<Record<string, unknown>> =>
  existsSync(RESULTS)
    ? readFileSync(RESULTS, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];

describe('kforge eval --resume: a batch interrupted and finished by the same command (cpu backend, fake worker)', () => {
  it('keeps the finished result through the interruption and evaluates only the rest when run again', { timeout: 180_000 }, async () => {
    const interrupted = kforgeEval();
    for (let waited = 0; waited < 600 && keptLines().length === 0; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(keptLines().length, 1, 'one result was kept before the interruption');
    interrupted.kill('SIGINT');
    const stopped = await interrupted;
    assert.equal(stopped.exitCode, 130, String(stopped.stderr));
    assert.match(String(stopped.stderr), /cancelled; the workers were stopped; the finished results are in .*results\.jsonl: run the same command to go on/);
    const first = keptLines()[0]!;
    assert.equal(first.verdict, 'correct');
    const keptName = path.basename(String(first.candidate));

    const resumed = await kforgeEval();
    assert.equal(resumed.exitCode, 0, String(resumed.stderr));
    const printed = String(resumed.stdout)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(printed.map((line) => path.basename(String(line.candidate))).sort(), ['candidate-correct.py', 'candidate-slow-correctness.py']);
    assert.match(String(resumed.stderr), /2 candidates: 2 correct; 1 kept from an earlier run \(--resume\), 1 evaluated in this one/);
    assert.ok(!String(resumed.stderr).includes(`${keptName} built`), 'the kept candidate was not built or evaluated again');
    assert.match(String(resumed.stderr), /built.*\(1 of 1 builds done\)/, 'the other was');
    assert.equal(keptLines().length, 2);
  });
});
