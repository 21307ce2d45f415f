import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { ResultPromise } from 'execa';
import { evaluationResultSchema } from '../../core/verdict.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { kforgeWithFakeWorker } from '../../../test-support/kforge-cli.js';

/**
 * Two `kforge eval` processes on the cpu backend of one host, with an artificial device budget
 * (`KFORGE_DEVICE_MEMORY_BYTES=12M`) that holds one of their evaluations at a time (the fake
 * worker's estimate says 8 MiB each): the second waits for room, says who holds it, and runs
 * once the first is done; with `--wait` shorter than the first's evaluation it gives up as the
 * machine's fault (exit 2), never with a verdict on its candidate. The fake worker
 * (test-support/fixtures/fake-worker) acts both roles, so no torch is needed.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-eval-budget-'));
after(() => rmSync(root, { recursive: true, force: true }));

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');
/** Its correctness trials take 8 s, holding its share of the budget that long (time for a second process to start on a slow machine). */
const SLOW = fixturePath('fake-scenarios', 'candidate-slow-correctness.py');
const QUICK = fixturePath('fake-scenarios', 'candidate-correct.py');

function kforgeEval(name: string, candidate: string, flags: string[] = []): ResultPromise<{ reject: false }> {
  return kforgeWithFakeWorker(root, ['eval', PROBLEM, candidate, '--backend', 'cpu', '--json', ...flags], {
    KFORGE_DEVICE_MEMORY_BYTES: '12M',
    KFORGE_CACHE_DIR: path.join(root, `cache-${name}`),
  });
}

/** Resolves once `text` appears on the process's stderr. */
function whenSaid(run: ResultPromise<{ reject: false }>, text: string): Promise<void> {
  return new Promise((resolve) => {
    let said = '';
    run.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes(text)) resolve();
    });
  });
}

describe('kforge eval: several processes within one device memory budget (cpu backend, artificial budget)', () => {
  it('makes the second evaluation wait for room, naming who holds it, and then evaluates it', { timeout: 180_000 }, async () => {
    const first = kforgeEval('wait-first', SLOW);
    await whenSaid(first, 'running the correctness trials');
    const startedSecondAt = performance.now();
    const second = await kforgeEval('wait-second', QUICK);
    const secondMs = performance.now() - startedSecondAt;
    const held = await first;
    assert.equal(held.exitCode, 0, String(held.stderr));
    assert.equal(second.exitCode, 0, String(second.stderr));
    for (const run of [held, second]) assert.equal(evaluationResultSchema.parse(JSON.parse(String(run.stdout))).verdict, 'correct');
    assert.match(
      String(second.stderr),
      new RegExp(
        `waiting for 8\\.0 MiB of cpu's memory: 4\\.0 MiB of 12\\.0 MiB free, held by pid ${first.pid} \\(pid ${first.pid}: problem\\.py candidate-slow-correctness\\.py, 8\\.0 MiB\\)`,
      ),
    );
    assert.ok(secondMs > 1000, `the second evaluation waited for the first's correctness trials (it took ${Math.round(secondMs)} ms)`);
  });

  it("ends a wait past --wait as the machine's fault (exit 2, no verdict), saying who held the memory", { timeout: 180_000 }, async () => {
    const first = kforgeEval('give-up-first', SLOW);
    await whenSaid(first, 'running the correctness trials');
    const second = await kforgeEval('give-up-second', QUICK, ['--wait', '1s']);
    const held = await first;
    assert.equal(held.exitCode, 0, String(held.stderr));
    assert.equal(second.exitCode, 2, String(second.stderr));
    assert.equal(String(second.stdout).trim(), '', 'no verdict is printed for a candidate that was never evaluated');
    assert.match(
      String(second.stderr),
      new RegExp(`waited 1 s for 8\\.0 MiB of device memory; 4\\.0 MiB of 12\\.0 MiB stayed free, held by pid ${first.pid} .*--wait DURATION`),
    );
  });
});
