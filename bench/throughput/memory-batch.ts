import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { generatePurePytorchBatch } from './candidate-batch.js';
import { createPipeline, requestFor, type BenchSettings } from './batch-runs.js';

/** The orchestrator's memory after a number of candidates finished (after a forced GC where exposed). */
export interface MemorySample {
  completed: number;
  atMs: number;
  rssBytes: number;
  heapUsedBytes: number;
}

export interface MemoryFigures {
  candidates: number;
  wallMs: number;
  candidatesPerHour: number;
  verdicts: Record<string, number>;
  /** Whether `global.gc` was available (node --expose-gc): heap figures are then after a full GC. */
  forcedGc: boolean;
  samples: MemorySample[];
  /** Least-squares slope of heapUsed over the second half of the batch, bytes per candidate. */
  heapSlopeBytesPerCandidate: number;
  rssSlopeBytesPerCandidate: number;
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return variance === 0 ? 0 : covariance / variance;
}

function sample(completed: number, startedAtMs: number): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const usage = process.memoryUsage();
  return { completed, atMs: performance.now() - startedAtMs, rssBytes: usage.rss, heapUsedBytes: usage.heapUsed };
}

/**
 * `count` distinct pure-PyTorch candidates (nothing to build; pass `guardPolicy: 'pytorch'` so that
 * neither the static guard nor the own-work rule rejects them) through one job queue, fed the way a
 * search feeds it (at most `outstanding` submitted and unfinished), keeping only verdict counts,
 * with the orchestrator's memory sampled about 20 times.
 */
export async function runMemoryBatch(problemPath: string, count: number, settings: BenchSettings, outstanding = 32): Promise<MemoryFigures> {
  const batch = await generatePurePytorchBatch(problemPath, path.join(settings.workDirectory, 'memory-candidates'), count);
  const workDirectory = path.join(settings.workDirectory, 'memory');
  await mkdir(workDirectory, { recursive: true });
  const pipeline = createPipeline({ ...settings, workDirectory });
  const started = performance.now();
  await pipeline.evaluator.warmUp(settings.backend);
  const every = Math.max(1, Math.floor(count / 20));
  const samples: MemorySample[] = [sample(0, started)];
  const verdicts: Record<string, number> = {};
  let next = 0;
  let completed = 0;
  const feed = async (): Promise<void> => {
    while (next < batch.length) {
      const candidate = batch[next]!;
      next += 1;
      let verdict: string;
      try {
        verdict = (await pipeline.queue.submit(requestFor(candidate, settings))).verdict;
      } catch {
        verdict = 'evaluator-error';
      }
      verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
      completed += 1;
      if (completed % every === 0 || completed === count) {
        samples.push(sample(completed, started));
        settings.log(
          `memory batch ${completed}/${count}: heap ${(samples.at(-1)!.heapUsedBytes / 2 ** 20).toFixed(1)} MiB, rss ${(samples.at(-1)!.rssBytes / 2 ** 20).toFixed(1)} MiB`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(outstanding, count) }, feed));
  const wallMs = performance.now() - started;
  await pipeline.queue.close();
  const secondHalf = samples.filter((entry) => entry.completed >= count / 2);
  return {
    candidates: count,
    wallMs,
    candidatesPerHour: count / (wallMs / 3_600_000),
    verdicts,
    forcedGc: typeof (globalThis as { gc?: unknown }).gc === 'function',
    samples,
    heapSlopeBytesPerCandidate: slope(secondHalf.map((entry) => [entry.completed, entry.heapUsedBytes])),
    rssSlopeBytesPerCandidate: slope(secondHalf.map((entry) => [entry.completed, entry.rssBytes])),
  };
}
