import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EvaluatedAttempt } from '../search/state/attempt.js';

/** Where a problem's best kernel and its verdict were written. */
export interface WrittenKernel {
  kernelPath: string;
  verdictPath: string;
}

/**
 * Writes a problem's best kernel as `<outDir>/<stem>.py` and its evaluation as
 * `<outDir>/<stem>.verdict.json` (the `kforge eval --json` object, its `candidate` pointing at the
 * written file). The verdict says whether the kernel is correct: a problem without a correct
 * candidate gets the one that got furthest, marked with its failing verdict.
 */
export async function writeBestKernel(outDir: string, stem: string, best: EvaluatedAttempt): Promise<WrittenKernel> {
  await mkdir(outDir, { recursive: true });
  const kernelPath = path.resolve(outDir, `${stem}.py`);
  const verdictPath = path.resolve(outDir, `${stem}.verdict.json`);
  await writeFile(kernelPath, best.candidate.source, 'utf8');
  const verdict = { ...best.result, candidate: kernelPath, candidate_id: best.candidate.id };
  await writeFile(verdictPath, `${JSON.stringify(verdict, null, 2)}\n`, 'utf8');
  return { kernelPath, verdictPath };
}
