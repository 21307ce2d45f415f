import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Backend } from '../../src/core/verdict.js';

/** How a benchmark candidate was made from a shipped example. */
export type CandidateVariant =
  /** The shipped file as it is. */
  | 'shipped'
  /** A comment added: another content hash (so another build), the same kernel and verdict. */
  | 'comment'
  /**
   * `forward` returns the kernel's output transposed (`.transpose(0, -1)`, view glue the static
   * guard allows): builds, runs, and is `incorrect` (a shape mismatch, or wrong values when square).
   */
  | 'transposed'
  /** A failing `static_assert` after the first include: does not build. */
  | 'broken';

/** One candidate of the benchmark batch. */
export interface BatchCandidate {
  id: string;
  problemPath: string;
  candidatePath: string;
  /** The shipped example it came from, relative to the repository. */
  origin: string;
  variant: CandidateVariant;
}

export interface CandidateBatchOptions {
  repositoryRoot: string;
  backend: Backend;
  /** Folder the generated candidate files are written to. */
  directory: string;
  /** Example folders (problems) to draw from, in folder order. */
  problems: number;
  /** Take shipped examples that spin forever (`cpu_timeout.py`): each costs a whole stage limit. */
  includeTimeouts?: boolean;
  /** At most this many candidates, taken round-robin over the problems. */
  limit?: number;
}

const PREFIX = { cpu: 'cpu_', cuda: 'cuda_', triton: 'triton_' } as const;

/** `level1_02_gelu` → `<repo>/problems/level1/02_gelu.py`. */
function problemOf(repositoryRoot: string, folder: string): string | null {
  const match = /^level(\d+)_(.+)$/.exec(folder);
  return match ? path.join(repositoryRoot, 'problems', `level${match[1]}`, `${match[2]}.py`) : null;
}

const INCLUDE = '#include <torch/extension.h>';

/** The source with ModelNew.forward's (one-line) return value transposed; null when there is none. */
function transposedForward(source: string, id: string): string | null {
  const lines = source.split('\n');
  const classAt = lines.findIndex((line) => /^class ModelNew\b/.test(line));
  const forwardAt = lines.findIndex((line, index) => index > classAt && /^\s+def forward\(/.test(line));
  if (classAt < 0 || forwardAt < 0) return null;
  const returnAt = lines.findIndex((line, index) => index > forwardAt && /^\s+return \S.*\)\s*$/.test(line));
  if (returnAt < 0) return null;
  lines[returnAt] = `${lines[returnAt]!.trimEnd()}.transpose(0, -1)  # kforge throughput benchmark: variant ${id}, wrong on purpose`;
  return lines.join('\n');
}

/** The source of a variant, or null when the example cannot make it. */
export function variantSource(source: string, variant: CandidateVariant, id: string): string | null {
  switch (variant) {
    case 'shipped':
      return source;
    case 'comment':
      return `${source.trimEnd()}\n# kforge throughput benchmark: variant ${id} (a comment, so another content hash)\n`;
    case 'transposed':
      return transposedForward(source, id);
    case 'broken': {
      const at = source.indexOf(INCLUDE);
      if (at < 0) return null;
      const end = at + INCLUDE.length;
      return `${source.slice(0, end)}\nstatic_assert(sizeof(int) == 0, "kforge throughput benchmark: variant ${id} must not build");${source.slice(end)}`;
    }
  }
}

/** Order of a problem's candidates when a batch is cut short: kinds of outcome first, look-alikes last. */
const PRIORITY: Record<CandidateVariant, number> = { shipped: 0, broken: 1, transposed: 2, comment: 3 };

/**
 * The batch, from the first `problems` example folders that hold `<backend>_*.py` files: each
 * shipped example; for a `<backend>_fast.py`, also that kernel with a comment added and transposed
 * (wrong), and for the first two such problems a broken variant. With `limit`, candidates are
 * taken round-robin over the problems (fast kernels first, then broken, wrong, other shipped
 * examples and look-alikes), so a short batch still spans every problem and kind of verdict.
 * Every candidate's source is distinct.
 */
export async function generateCandidateBatch(options: CandidateBatchOptions): Promise<BatchCandidate[]> {
  const examplesRoot = path.join(options.repositoryRoot, 'examples');
  const prefix = PREFIX[options.backend];
  const folders = (await readdir(examplesRoot, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  await mkdir(options.directory, { recursive: true });
  const perProblem: BatchCandidate[][] = [];
  let fastProblems = 0;
  for (const folder of folders) {
    if (perProblem.length >= options.problems) break;
    const problemPath = problemOf(options.repositoryRoot, folder);
    const files = (await readdir(path.join(examplesRoot, folder)))
      .filter((name) => name.startsWith(prefix) && name.endsWith('.py') && (options.includeTimeouts || !name.includes('timeout')))
      .sort();
    if (!problemPath || files.length === 0) continue;
    const hasFast = files.includes(`${prefix}fast.py`);
    if (hasFast) fastProblems += 1;
    const candidates: Array<BatchCandidate & { rank: number }> = [];
    for (const file of files) {
      const origin = path.join('examples', folder, file);
      const source = await readFile(path.join(options.repositoryRoot, origin), 'utf8');
      const fast = file === `${prefix}fast.py`;
      const variants: CandidateVariant[] = fast ? ['shipped', 'comment', 'transposed', ...(fastProblems <= 2 ? (['broken'] as const) : [])] : ['shipped'];
      for (const variant of variants) {
        const id = `${folder}-${file.replace(/\.py$/, '')}-${variant}`;
        const text = variantSource(source, variant, id);
        if (text === null) continue;
        const candidatePath = path.join(options.directory, `${id}.py`);
        await writeFile(candidatePath, text, 'utf8');
        // Other shipped examples (compile errors, crashes, wrong kernels) come after the broken variant.
        const rank = fast ? PRIORITY[variant] : 2.5;
        candidates.push({ id, problemPath, candidatePath, origin, variant, rank });
      }
    }
    perProblem.push(candidates.sort((a, b) => a.rank - b.rank).map(({ rank: _rank, ...candidate }) => candidate));
  }
  const batch: BatchCandidate[] = [];
  for (let round = 0; perProblem.some((list) => list.length > round); round += 1) {
    for (const list of perProblem) if (list[round]) batch.push(list[round]!);
  }
  return options.limit === undefined ? batch : batch.slice(0, options.limit);
}

/**
 * `count` distinct pure-PyTorch candidates for one problem (its `Model` renamed `ModelNew`, with
 * a numbered comment), for batches that measure the orchestrator rather than builds.
 */
export async function generatePurePytorchBatch(problemPath: string, directory: string, count: number): Promise<BatchCandidate[]> {
  const source = await readFile(problemPath, 'utf8');
  if (!/^class Model\(/m.test(source)) throw new Error(`the problem ${problemPath} defines no top-level \`class Model(\``);
  const renamed = `${source.replace(/^class Model\(/m, 'class ModelNew(').trimEnd()}\n`;
  await mkdir(directory, { recursive: true });
  const batch: BatchCandidate[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = `pure-${String(index).padStart(4, '0')}`;
    const candidatePath = path.join(directory, `${id}.py`);
    await writeFile(candidatePath, `${renamed}# kforge throughput benchmark: pure-PyTorch candidate ${index}\n`, 'utf8');
    batch.push({ id, problemPath, candidatePath, origin: path.basename(problemPath), variant: 'comment' });
  }
  return batch;
}
