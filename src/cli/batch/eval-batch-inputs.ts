import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { REFERENCE_FILE } from '../../eval/problem/problem-folder.js';
import { UsageError } from '../io/usage-error.js';

/** One evaluation of a batch: a problem (a file, or a problem folder) and a candidate file, both absolute. */
export interface EvaluationPair {
  problemPath: string;
  candidatePath: string;
}

/** A KernelBench run folder's kernel file: `level_<L>_problem_<N>_sample_<S>_kernel.py` (KernelBench's scripts write these). */
const KERNELBENCH_KERNEL = /^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$/;

/** The file listing the pairs of a pairs folder, one `PROBLEM:CANDIDATE` a line, relative to the folder. */
export const PAIRS_FILE = 'pairs.txt';

async function kind(file: string): Promise<'file' | 'directory' | null> {
  try {
    const info = await stat(file);
    return info.isDirectory() ? 'directory' : 'file';
  } catch {
    return null;
  }
}

/** Whether `absolute` is a problem folder: a folder holding reference.py (docs/problems.md); it is a problem, never a folder of pairs. */
async function isProblemFolder(absolute: string): Promise<boolean> {
  return (await kind(absolute)) === 'directory' && (await kind(path.join(absolute, REFERENCE_FILE))) === 'file';
}

/** A problem as a batch names it: a file, or a problem folder. */
async function isProblem(absolute: string): Promise<boolean> {
  return (await kind(absolute)) === 'file' || (await isProblemFolder(absolute));
}

async function existingFile(given: string, cwd: string, what: string): Promise<string> {
  const absolute = path.resolve(cwd, given);
  if ((await kind(absolute)) !== 'file') throw new UsageError(`the ${what} file \`${given}\` does not exist (or is a folder)`);
  return absolute;
}

/** `PROBLEM:CANDIDATE`, split at the colon that leaves an existing problem (a file or a problem folder) and candidate file (paths may hold colons). */
async function splitPair(text: string, cwd: string): Promise<EvaluationPair> {
  for (let index = text.indexOf(':'); index > 0; index = text.indexOf(':', index + 1)) {
    const problem = path.resolve(cwd, text.slice(0, index));
    const candidate = path.resolve(cwd, text.slice(index + 1));
    if ((await isProblem(problem)) && (await kind(candidate)) === 'file') return { problemPath: problem, candidatePath: candidate };
  }
  throw new UsageError(`\`${text}\` is not PROBLEM:CANDIDATE with an existing problem (a file, or a folder with ${REFERENCE_FILE}) and candidate file`);
}

/** The problem file of KernelBench problem `number` of `level` in a KernelBench checkout's problem folder. */
async function kernelBenchProblem(root: string, level: number, number: number): Promise<string | null> {
  const folder = path.join(root, `level${level}`);
  const names = await readdir(folder).catch(() => [] as string[]);
  const name = names.find((entry) => entry.startsWith(`${number}_`) && entry.endsWith('.py'));
  return name ? path.join(folder, name) : null;
}

/** The problem folder of a KernelBench checkout: the folder itself when it has level1, else its `KernelBench/`. */
async function kernelBenchRoot(given: string, cwd: string): Promise<string> {
  const absolute = path.resolve(cwd, given);
  for (const candidate of [absolute, path.join(absolute, 'KernelBench')]) {
    if ((await kind(path.join(candidate, 'level1'))) === 'directory') return candidate;
  }
  throw new UsageError(`\`--kernelbench ${given}\` holds no level1/ folder; pass a KernelBench checkout or its KernelBench/ folder`);
}

async function pairsOfFolder(folder: string, kernelBench: string | undefined, cwd: string): Promise<EvaluationPair[]> {
  const listing = path.join(folder, PAIRS_FILE);
  if ((await kind(listing)) === 'file') {
    const lines = (await readFile(listing, 'utf8'))
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    return Promise.all(lines.map((line) => splitPair(line, folder)));
  }
  const kernels = (await readdir(folder)).filter((name) => KERNELBENCH_KERNEL.test(name)).sort(naturally);
  if (kernels.length === 0) {
    throw new UsageError(
      `the folder \`${folder}\` has neither ${PAIRS_FILE} (PROBLEM:CANDIDATE lines) nor KernelBench kernels (level_<L>_problem_<N>_sample_<S>_kernel.py)`,
    );
  }
  if (!kernelBench)
    throw new UsageError(`\`${folder}\` is a KernelBench run folder: say where its problems are with --kernelbench PATH (a KernelBench checkout)`);
  const root = await kernelBenchRoot(kernelBench, cwd);
  const pairs: EvaluationPair[] = [];
  for (const name of kernels) {
    const [, level, number] = KERNELBENCH_KERNEL.exec(name)!;
    const problem = await kernelBenchProblem(root, Number(level), Number(number));
    if (!problem) throw new UsageError(`no problem ${number} in ${path.join(root, `level${level}`)} for ${name}`);
    pairs.push({ problemPath: problem, candidatePath: path.join(folder, name) });
  }
  return pairs;
}

function naturally(left: string, right: string): number {
  return left.localeCompare(right, undefined, { numeric: true });
}

/**
 * The evaluations `kforge eval` was given: `PROBLEM CANDIDATE…` (one problem, a file or a problem
 * folder, and its candidates),
 * `PROBLEM:CANDIDATE…` pairs, or folders — a folder with `pairs.txt`, or a KernelBench run folder
 * (`level_<L>_problem_<N>_sample_<S>_kernel.py`, problems from `--kernelbench`).
 */
export async function collectPairs(argumentsGiven: readonly string[], options: { cwd: string; kernelBench?: string | undefined }): Promise<EvaluationPair[]> {
  if (argumentsGiven.length === 0) throw new UsageError('give a problem and its candidates, PROBLEM:CANDIDATE pairs, or a folder of them');
  const first = argumentsGiven[0]!;
  // A problem folder (reference.py inside) is a problem, never a folder of pairs.
  const firstIsProblem = await isProblem(path.resolve(options.cwd, first));
  if (firstIsProblem && argumentsGiven.length === 1 && !first.includes(':')) {
    throw new UsageError("missing required argument 'candidate'; run `kforge eval --help` for usage");
  }
  if (firstIsProblem && argumentsGiven.length >= 2 && !(await everyIsPair(argumentsGiven, options.cwd))) {
    const problemPath = path.resolve(options.cwd, first);
    return Promise.all(
      argumentsGiven.slice(1).map(async (candidate) => ({ problemPath, candidatePath: await existingFile(candidate, options.cwd, 'candidate') })),
    );
  }
  const pairs: EvaluationPair[] = [];
  for (const given of argumentsGiven) {
    const absolute = path.resolve(options.cwd, given);
    const found = await kind(absolute);
    if (found === 'directory') pairs.push(...(await pairsOfFolder(absolute, options.kernelBench, options.cwd)));
    else if (given.includes(':')) pairs.push(await splitPair(given, options.cwd));
    else throw new UsageError(`\`${given}\` is neither PROBLEM:CANDIDATE nor a folder of pairs; to evaluate candidates of one problem, give the problem first`);
  }
  return pairs;
}

async function everyIsPair(argumentsGiven: readonly string[], cwd: string): Promise<boolean> {
  for (const given of argumentsGiven) {
    if (!given.includes(':')) return false;
    const split = await splitPair(given, cwd).catch(() => null);
    if (!split) return false;
  }
  return true;
}
