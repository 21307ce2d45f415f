import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
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
 * The file names are kept, so messages and tracebacks still name them.
 */
export async function stageCandidateInputs(scratch: ScratchDirectory, problemPath: string, candidatePath: string): Promise<CandidateInputs> {
  const problemFolder = path.join(scratch.inputDirectory, 'problem');
  const candidateFolder = path.join(scratch.inputDirectory, 'candidate');
  await Promise.all([mkdir(problemFolder, { recursive: true, mode: 0o755 }), mkdir(candidateFolder, { recursive: true, mode: 0o755 })]);
  const inputs = {
    problemPath: path.join(problemFolder, path.basename(problemPath)),
    candidatePath: path.join(candidateFolder, path.basename(candidatePath)),
  };
  await Promise.all([copyFile(problemPath, inputs.problemPath), copyFile(candidatePath, inputs.candidatePath)]);
  return inputs;
}
