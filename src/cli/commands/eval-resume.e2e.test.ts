import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { kforgeWithFakeWorker } from '../../../test-support/kforge-cli.js';

/**
 * A batch stopped part-way and finished by the same command (`--resume FILE`), as a user whose
 * batch at KernelBench's sizes ran out of time would do: the real CLI and its pipeline on the cpu
 * backend, with the fake worker (test-support/fixtures/fake-worker) acting both roles, so no torch
 * is needed. Both candidates are copies of one whose correctness trials hold the device 8 s, so
 * whichever takes the device first, the other's result comes 8 s after the first one's: the run is
 * interrupted (SIGINT) once the first result is in the file.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-eval-resume-'));
after(() => rmSync(root, { recursive: true, force: true }));

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');
const FIRST = path.join(root, 'candidate-a.py');
const SECOND = path.join(root, 'candidate-b.py');
for (const copy of [FIRST, SECOND]) copyFileSync(fixturePath('fake-scenarios', 'candidate-slow-correctness.py'), copy);
const RESULTS = path.join(root, 'results.jsonl');

function kforgeEval() {
  return kforgeWithFakeWorker(root, ['eval', `${PROBLEM}:${FIRST}`, `${PROBLEM}:${SECOND}`, '--backend', 'cpu', '--json', '--resume', RESULTS], {
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
    assert.deepEqual(printed.map((line) => path.basename(String(line.candidate))).sort(), ['candidate-a.py', 'candidate-b.py']);
    assert.match(String(resumed.stderr), /2 candidates: 2 correct; 1 kept from an earlier run \(--resume\), 1 evaluated in this one/);
    assert.ok(!String(resumed.stderr).includes(`${keptName} built`), 'the kept candidate was not built or evaluated again');
    assert.match(String(resumed.stderr), /built.*\(1 of 1 builds done\)/, 'the other was');
    assert.equal(keptLines().length, 2);
  });
});
