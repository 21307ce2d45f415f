import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { BuildCache } from '../cache/build-cache.js';
import type { EvaluationRequest } from '../evaluator.js';
import { FileBaselineCache } from '../cache/file-baseline-cache.js';
import { MachineFaultError } from '../machine-fault-error.js';
import type { PipelineEvent } from '../pipeline-events.js';
import { PipelinedEvaluator } from './pipelined-evaluator.js';

/**
 * Two PipelinedEvaluators (as two kforge processes of one host have) on the same `cuda:0` name and
 * lock folder, through the fake worker (no torch, no GPU: the name is only a name to it).
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-pipelined-lock-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
const lockDirectory = path.join(root, 'device-locks');

/** A pipeline on the fake worker with its own caches under `root/name`; `lockDirectory` shared unless given. */
function evaluator(name: string, locks = lockDirectory): PipelinedEvaluator {
  return new PipelinedEvaluator({
    workerDirectory: fixturePath('fake-worker'),
    python: TEST_PYTHON,
    baselineCache: new FileBaselineCache({ directory: path.join(root, name, 'baselines') }),
    buildCache: new BuildCache({ directory: path.join(root, name, 'builds') }),
    scratchRoot: root,
    cudaDevices: ['cuda:0'],
    deviceLockDirectory: locks,
    compilerIdentity: async () => 'fake-compiler',
    sizing: { warmCandidatesPerDevice: 0, warmReferencesPerDevice: 0 },
  });
}

const request: EvaluationRequest = {
  problemPath: fixturePath('fake-scenarios', 'problem.py'),
  candidatePath: fixturePath('fake-scenarios', 'candidate-correct.py'),
  backend: 'cuda',
  precision: 'fp32',
  tolerance: 'kernelbench',
  perfTrials: 5,
  // Each evaluator times its baselines itself (its own cache), so each holds the GPU a while.
  refreshBaselines: true,
};

describe('PipelinedEvaluator: the host-wide GPU lock', () => {
  it('never lets two evaluators hold one GPU at once, and leaves no lock file once closed', { timeout: 120_000 }, async () => {
    const evaluators = [evaluator('a'), evaluator('b')];
    const holds: Array<{ from: number; to: number; waitedMs: number }> = [];
    const lockedWhileHeld: boolean[] = [];
    const evaluateOn = async (pipelined: PipelinedEvaluator): Promise<void> => {
      let from = 0;
      let waitedMs = 0;
      const onPipelineEvent = (event: PipelineEvent): void => {
        if (event.kind === 'device-acquired') {
          from = performance.now();
          waitedMs = event.waitedMs;
          lockedWhileHeld.push(existsSync(path.join(lockDirectory, 'gpu0.lock')));
        }
        if (event.kind === 'device-released') holds.push({ from, to: performance.now(), waitedMs });
      };
      const { result } = await pipelined.evaluate(request, { onPipelineEvent });
      assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
    };
    try {
      await Promise.all(evaluators.flatMap((pipelined) => [evaluateOn(pipelined), evaluateOn(pipelined)]));
    } finally {
      await Promise.all(evaluators.map((pipelined) => pipelined.close()));
    }
    assert.equal(holds.length, 4);
    assert.deepEqual(lockedWhileHeld, [true, true, true, true], 'the GPU is locked while held');
    holds.sort((a, b) => a.from - b.from);
    for (let index = 1; index < holds.length; index += 1) {
      assert.ok(holds[index]!.from >= holds[index - 1]!.to, `two evaluations held cuda:0 at once: ${JSON.stringify(holds)}`);
    }
    assert.ok(holds.slice(1).every((hold) => hold.waitedMs > 0));
    assert.deepEqual(readdirSync(lockDirectory), [], 'the lock file is removed');
  });
});

describe('PipelinedEvaluator: baselines measured while the candidates build', () => {
  const prefetching = (name: string): PipelinedEvaluator => evaluator(name, path.join(root, name, 'locks'));

  it("measures a problem's baselines once, in a lease of their own, before its candidates need them", { timeout: 120_000 }, async () => {
    const pipelined = prefetching('prefetch');
    const leases: string[] = [];
    try {
      // Two candidates of one problem whose builds take 1.5 s: the device is free meanwhile.
      const slow = { ...request, candidatePath: fixturePath('fake-scenarios', 'candidate-slow-build.py'), refreshBaselines: false };
      const onPipelineEvent = (event: PipelineEvent): void => void (event.kind === 'device-acquired' && leases.push('candidate'));
      const results = await Promise.all([pipelined.evaluate(slow, { onPipelineEvent }), pipelined.evaluate({ ...slow, perfTrials: 5 }, { onPipelineEvent })]);
      for (const { result } of results) {
        assert.equal(result.verdict, 'correct');
        // Measured during its build (by the prefetch), so not "from the cache" of an earlier evaluation.
        assert.equal(result.timing?.baseline_cached, false);
        assert.equal(result.stages?.baseline, undefined, "no candidate's reference timed the baselines");
      }
      assert.equal(readdirSync(path.join(root, 'prefetch', 'baselines')).filter((name) => name.endsWith('.json')).length, 1, 'measured once');
      const [device] = (await pipelined.usage()).devices;
      assert.equal(device?.leases, 3, 'the prefetch held the device once, and each candidate once');
      assert.deepEqual(leases, ['candidate', 'candidate']);
    } finally {
      await pipelined.close();
    }
  });

  it('close() stops a prefetch still timing, so a candidate that did not build is not kept waiting for baselines', { timeout: 120_000 }, async () => {
    const pipelined = prefetching('prefetch-close');
    const startedAt = performance.now();
    const { result } = await pipelined.evaluate({
      ...request,
      problemPath: fixturePath('fake-scenarios', 'problem-slow-baseline.py'),
      candidatePath: fixturePath('fake-scenarios', 'candidate-compile_error.py'),
      refreshBaselines: false,
    });
    assert.equal(result.verdict, 'compile_error');
    await pipelined.close();
    const elapsedMs = performance.now() - startedAt;
    assert.ok(elapsedMs < 20_000, `closed after ${Math.round(elapsedMs)} ms; the fake baselines take 30 s`);
  });
});

describe('PipelinedEvaluator: --wait bounds what other processes hold, not its own queue', () => {
  // A candidate whose correctness trials hold the device 2 s, four times the wait limit.
  const slowCandidate = path.join(root, 'candidate-holds-2s.py');
  writeFileSync(slowCandidate, '# fake-worker: slow-correctness-2\n');
  const holding: EvaluationRequest = { ...request, candidatePath: slowCandidate, refreshBaselines: false };

  it("evaluates a candidate queued behind its own process's evaluation past --wait", { timeout: 120_000 }, async () => {
    const pipelined = evaluator('own-queue', path.join(root, 'own-queue', 'locks'));
    try {
      const outcomes = await Promise.allSettled([
        pipelined.evaluate({ ...holding, deviceWaitMs: 500 }),
        pipelined.evaluate({ ...holding, perfTrials: 6, deviceWaitMs: 500 }),
      ]);
      for (const outcome of outcomes) {
        assert.equal(outcome.status, 'fulfilled', outcome.status === 'rejected' ? String(outcome.reason) : '');
        if (outcome.status === 'fulfilled') assert.equal(outcome.value.result.verdict, 'correct');
      }
    } finally {
      await pipelined.close();
    }
  });

  it('ends the wait for a device another process holds past --wait, without a verdict', { timeout: 120_000 }, async () => {
    const locks = path.join(root, 'two-processes', 'locks');
    const [holder, waiter] = [evaluator('two-a', locks), evaluator('two-b', locks)];
    try {
      let acquired!: () => void;
      const held = new Promise<void>((resolve) => (acquired = resolve));
      const holding2s = holder.evaluate(holding, { onPipelineEvent: (event) => void (event.kind === 'device-acquired' && acquired()) });
      await held;
      await assert.rejects(waiter.evaluate({ ...request, refreshBaselines: false, deviceWaitMs: 500 }), (error: unknown) => {
        assert.ok(error instanceof MachineFaultError, String(error));
        assert.equal(error.resource, 'device-wait');
        assert.match(error.message, /waited \d+ s for the device/);
        return true;
      });
      assert.equal((await holding2s).result.verdict, 'correct');
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});
