import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPOSITORY_ROOT, WORKER_DIRECTORY } from '../core/repository-paths.js';
import { evaluationResultSchema, type EvaluationResult } from '../core/verdict.js';
import { fixturePath } from '../../test-support/fixture-paths.js';
import { BuildCache } from '../eval/cache/build-cache.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import { FileBaselineCache } from '../eval/cache/file-baseline-cache.js';
import { InProcessJobQueue } from './in-process-job-queue.js';
import type { PipelineEvent } from '../eval/pipeline-events.js';
import { PipelinedEvaluator } from '../eval/pipeline/pipelined-evaluator.js';
import { compilerUnavailable, TORCH_PYTHON, torchUnavailable } from '../../test-support/torch-python.js';

/**
 * The job queue over the pipelined evaluator, end to end through the real worker on the cpu
 * backend (KFORGE_PYTHON, else /usr/bin/python3; KFORGE_WORKER_DIR, else <repo>/worker). The C++
 * case builds one extension (about 45 s on a 2-core machine).
 */
const PYTHON = TORCH_PYTHON;
const skip = torchUnavailable();
const skipBuild = skip || compilerUnavailable();

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-queue-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Seen {
  event: PipelineEvent;
  atMs: number;
}

function pipeline(name: string): { queue: InProcessJobQueue; buildCache: BuildCache; events: Map<string, Seen[]> } {
  const buildCache = new BuildCache({ directory: path.join(root, name, 'builds') });
  const evaluator = new PipelinedEvaluator({
    workerDirectory: process.env.KFORGE_WORKER_DIR ?? WORKER_DIRECTORY,
    python: PYTHON,
    baselineCache: new FileBaselineCache({ directory: path.join(root, name, 'baselines') }),
    buildCache,
    scratchRoot: root,
    terminationGraceMs: 500,
    sizing: { warmCandidatesPerDevice: 2, warmReferencesPerDevice: 1 },
  });
  const queue = new InProcessJobQueue({ evaluator });
  const events = new Map<string, Seen[]>();
  queue.on('job-pipeline', ({ jobId, event }) => events.set(jobId, [...(events.get(jobId) ?? []), { event, atMs: performance.now() }]));
  return { queue, buildCache, events };
}

function valid(result: EvaluationResult): EvaluationResult {
  const parsed = evaluationResultSchema.safeParse(result);
  assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
  return result;
}

const describeResult = (result: EvaluationResult): string => `${result.verdict}: ${JSON.stringify(result.reasons)}`;

describe('InProcessJobQueue over the PipelinedEvaluator with the real worker', { skip }, () => {
  it('judges a pure-PyTorch batch, holding the one cpu device for one candidate at a time', async () => {
    const { queue, events } = pipeline('pure');
    const job = (candidate: string, jobId: string): Promise<EvaluationResult> =>
      queue.submit(
        {
          problemPath: fixturePath('problems', 'scale-add.py'),
          candidatePath: fixturePath('candidates', `${candidate}.py`),
          backend: 'cpu',
          precision: 'fp32',
          tolerance: 'kernelbench',
          perfTrials: 20,
          warmupTrials: 2,
          // These candidates are plain PyTorch on purpose: the `pytorch` policy records the static
          // guard's findings and requires no kernel of their own.
          guardPolicy: 'pytorch',
        },
        { jobId },
      );
    try {
      const [correct, incorrect, broken, again] = (
        await Promise.all([
          job('scale-add-correct', 'correct'),
          job('scale-add-incorrect', 'incorrect'),
          job('syntax-error', 'broken'),
          job('scale-add-correct', 'again'),
        ])
      ).map(valid) as [EvaluationResult, EvaluationResult, EvaluationResult, EvaluationResult];
      assert.equal(correct.verdict, 'correct', describeResult(correct));
      assert.equal(again.verdict, 'correct', describeResult(again));
      assert.equal(incorrect.verdict, 'incorrect', describeResult(incorrect));
      assert.equal(broken.verdict, 'invalid_input', describeResult(broken));
      assert.equal(correct.timing?.candidate_ms.n, 20);
      const measured = [correct, incorrect, again].filter((result) => result.stages?.baseline !== undefined);
      assert.equal(measured.length, 1, 'the baselines were measured once for the batch');

      // Device holds, from the events: never two at once, and none for the candidate that did not build.
      const holds: Array<[number, number]> = [];
      for (const [jobId, list] of events) {
        assert.equal(list[0]?.event.kind, 'build-started', jobId);
        const acquired = list.filter((seen) => seen.event.kind === 'device-acquired');
        const released = list.filter((seen) => seen.event.kind === 'device-released');
        assert.equal(acquired.length, jobId === 'broken' ? 0 : 1, jobId);
        assert.equal(released.length, acquired.length, jobId);
        if (acquired[0] && released[0]) holds.push([acquired[0].atMs, released[0].atMs]);
      }
      holds.sort((a, b) => a[0] - b[0]);
      for (let index = 1; index < holds.length; index += 1) assert.ok(holds[index]![0] >= holds[index - 1]![1], 'two candidates held the cpu at once');
      assert.equal(holds.length, 3);
      assert.deepEqual(queue.counts(), { waiting: 0, running: 0, finished: 4, failed: 0 });
    } finally {
      await queue.close();
    }
  });

  it('builds a C++ candidate once: concurrent and later evaluations of the same source reuse the build', { skip: skipBuild, timeout: 600_000 }, async () => {
    const { queue, buildCache, events } = pipeline('cpp');
    const request: EvaluationRequest = {
      problemPath: path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py'),
      candidatePath: path.join(REPOSITORY_ROOT, 'examples', 'level1_02_gelu', 'cpu_fast.py'),
      backend: 'cpu',
      precision: 'fp32',
      tolerance: 'kernelbench',
      trials: 2,
      perfTrials: 10,
      warmupTrials: 2,
    };
    try {
      const [first, second] = await Promise.all([queue.submit(request, { jobId: 'first' }), queue.submit(request, { jobId: 'second' })]);
      const startedAt = performance.now();
      const third = await queue.submit(request, { jobId: 'third' });
      const reEvaluationMs = performance.now() - startedAt;
      for (const result of [first, second, third]) assert.equal(valid(result).verdict, 'correct', describeResult(result));

      const built = (jobId: string) => events.get(jobId)?.find((seen) => seen.event.kind === 'build-finished')?.event;
      const reports = ['first', 'second', 'third'].map(built);
      const fresh = reports.filter((report) => report?.kind === 'build-finished' && report.cacheHit === false);
      const hits = reports.filter((report) => report?.kind === 'build-finished' && report.cacheHit === true);
      assert.equal(fresh.length, 1, `one evaluation compiled: ${JSON.stringify(reports)}`);
      assert.equal(hits.length, 2, 'the worker reported a cache hit for the other two');
      const buildMs = [first, second, third].map((result) => result.stages?.build ?? Number.NaN).sort((a, b) => a - b);
      assert.ok(buildMs[2]! > 10_000, `the one real build took ${buildMs[2]} ms`);
      assert.ok(buildMs[0]! < 5_000 && buildMs[1]! < 5_000, `the reused builds took ${buildMs[0]} and ${buildMs[1]} ms`);
      assert.ok(reEvaluationMs < 120_000);
      const stats = await buildCache.stats();
      assert.deepEqual({ entries: stats.entries, builds: stats.builds, hits: stats.hits }, { entries: 1, builds: 1, hits: 2 });
    } finally {
      await queue.close();
    }
  });
});
