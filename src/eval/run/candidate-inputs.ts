import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { declarationsBeside } from '../problem/problem-folder.js';
import type { ScratchDirectory } from '../process/scratch-directory.js';

/** Where the candidate worker reads the problem and its own file. */
export interface CandidateInputs {
  problemPath: string;
  candidatePath: string;
}

/**
 * Copies the problem and the candidate into the scratch's `in` folder (`in/problem/<name>`,
 * `in/candidate/<name>`), which the candidate sees read-only: it never learns where the originals
 * live (the project, the parent's home) and cannot change the problem that the reference loads.
 * The file names are kept, so messages and tracebacks still name them. A problem folder's
 * `reference.py` travels with the declarations beside it (`shapes.py`, `problem.yaml`: its
 * tolerance and forbidden names, which the candidate's worker enforces), never with anything else
 * of the folder (its `check.py`, solutions).
 */
export async function stageCandidateInputs(scratch: ScratchDirectory, problemPath: string, candidatePath: string): Promise<CandidateInputs> {
  const problemFolder = path.join(scratch.inputDirectory, 'problem');
  const candidateFolder = path.join(scratch.inputDirectory, 'candidate');
  await Promise.all([mkdir(problemFolder, { recursive: true, mode: 0o755 }), mkdir(candidateFolder, { recursive: true, mode: 0o755 })]);
  const inputs = {
    problemPath: path.join(problemFolder, path.basename(problemPath)),
    candidatePath: path.join(candidateFolder, path.basename(candidatePath)),
  };
  const declarations = await declarationsBeside(problemPath);
  await Promise.all([
    copyFile(problemPath, inputs.problemPath),
    copyFile(candidatePath, inputs.candidatePath),
    ...declarations.map((file) => copyFile(file, path.join(problemFolder, path.basename(file)))),
  ]);
  return inputs;
}

/** Every string in `value` (objects and arrays walked) with each `from` path replaced by its `to`. */
function replaced<T>(value: T, pairs: ReadonlyArray<readonly [string, string]>): T {
  if (typeof value === 'string') return pairs.reduce((text, [from, to]) => text.split(from).join(to), value as string) as T;
  if (Array.isArray(value)) return value.map((item) => replaced(item, pairs)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaced(item, pairs)])) as T;
  return value;
}

/**
 * A result whose reasons and diagnostics name the files the user gave rather than their staged
 * copies (which are gone once the evaluation ends): a traceback or a loader's message from the
 * candidate's worker points at `in/problem/<name>` in a scratch folder.
 */
export function namingOriginals<T extends { reasons: unknown; diagnostics: unknown }>(result: T, staged: CandidateInputs, originals: CandidateInputs): T {
  const pairs = [
    [staged.problemPath, originals.problemPath],
    [staged.candidatePath, originals.candidatePath],
  ] as const;
  return { ...result, reasons: replaced(result.reasons, pairs), diagnostics: replaced(result.diagnostics, pairs) };
}
