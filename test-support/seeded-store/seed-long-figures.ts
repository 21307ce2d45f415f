import path from 'node:path';
import type { EvaluationResult, ShapeOutcome, TimingStats } from '../../src/core/verdict.js';
import type { SqliteRunStore } from '../../src/store/sqlite/sqlite-run-store.js';
import { seedPlan } from './seed-dashboard-store.js';
import { correct, cudaBuild } from './seed-results.js';

/**
 * A run whose one candidate has the widest figures the dashboard formats: sub-microsecond and
 * multi-second times (`0.000987 ms ± 0.0000395 ms`, `12.3 s`), a million timed calls, speedups in
 * the hundreds of thousands, a sweep of shapes with torch.compile figures, and a kernel with a long
 * template name: what the candidate view's tables must hold inside their panel at 1280 px.
 */

export const LONG_FIGURES_RUN = 'long-figures';

/** Statistics with every figure as long as `ms()` writes them. */
function wide(median: number, n: number): TimingStats {
  return { median, mean: median * 1.0234, std: median * 0.0401, min: median * 0.9123, max: median * 12.34, ci95: [median * 0.987, median * 1.0123], n };
}

function shape(index: number, rows: number, cols: number): ShapeOutcome {
  const timing = {
    candidate_median_ms: 0.000987 * (index + 1),
    eager_median_ms: 1234.5,
    compile_median_ms: 987.65,
    speedup_vs_eager: 1234.5 / (0.000987 * (index + 1)),
    speedup_vs_compile: 987.65 / (0.000987 * (index + 1)),
    speedup_vs_best: 987.65 / (0.000987 * (index + 1)),
  };
  const values = { batch_size: 4096, rows, cols, hidden_size: 16_384, causal: true };
  return { index, values, overrides: values, unused: [], verdict: 'correct', reasons: [], max_abs_error: 1.2345e-7, max_rel_error: 3.4e-6, timing };
}

function longFiguresResult(): EvaluationResult {
  const name = 'void softmax_kernel_vectorized<256, float, 4, true>(float const* __restrict__, float* __restrict__, long, long, float)';
  const base = correct('cuda', {
    medianMs: 0.000987,
    eagerMs: 1234.5,
    compileMs: 987.65,
    build: cudaBuild([{ name, registers: 255, shared: 49_152, local: 1024, stack: 1024 }], '.version 9.0\n', 'MOV R1, c[0x0][0x28] ;\n'),
    bound: { bytes: 12_884_901_888, flops: 98_765_432_100, lowerBoundMs: 0.000456 },
  });
  if (base.verdict !== 'correct' || !base.timing) throw new Error('expected a timed correct result');
  const shapes = [shape(0, 16_384, 131_072), shape(1, 32_768, 65_536), shape(2, 65_536, 32_768)];
  return {
    ...base,
    timing: {
      ...base.timing,
      candidate_ms: wide(0.000987, 1_000_000),
      eager_ms: wide(1234.5, 100_000),
      compile_ms: wide(987.65, 100_000),
      speedup_vs_eager: 1234.5 / 0.000987,
      speedup_vs_compile: 987.65 / 0.000987,
      speedup_vs_best: 987.65 / 0.000987,
    },
    shapes,
    shape_geomean: { shapes: 3, speedup_vs_eager: 687_654.3, speedup_vs_compile: 550_123.4, speedup_vs_best: 550_123.4 },
  };
}

/** Adds the run and its candidate to `store`; the ids the test opens. */
export async function addLongFiguresRun(store: SqliteRunStore, folder: string): Promise<{ problemHash: string; candidateId: number }> {
  const problem = await store.upsertProblem({ name: '99_wide_softmax', source: 'class Model: pass  # wide\n', path: path.join(folder, '99_wide_softmax.py') });
  await store.createRun({
    id: LONG_FIGURES_RUN,
    strategy: 'refine',
    model: 'files:wide',
    config: seedPlan({ problems: [problem], backend: 'cuda', strategy: 'refine', workDirectory: folder, provider: 'files', model: 'wide' }),
    problemHashes: [problem.hash],
  });
  const candidate = await store.addCandidate({ runId: LONG_FIGURES_RUN, problemHash: problem.hash, round: 0, source: '# wide\n', origin: 'files' });
  await store.recordEvaluation({ candidateId: candidate.id, result: longFiguresResult(), gpuSeconds: 98_765, optionsHash: 'wide', cacheKey: 'wide-0' });
  await store.updateRunStatus(LONG_FIGURES_RUN, 'finished');
  return { problemHash: problem.hash, candidateId: candidate.id };
}
