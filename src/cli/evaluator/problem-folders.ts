import path from 'node:path';
import type { ProblemFolderNotes } from '../../agent/run/optimize-plan.js';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { problemFolderOf, type ProblemFolder } from '../../eval/problem/problem-folder.js';
import { createProblemFolderReader, type ProblemFolderReader } from '../../eval/problem/problem-folder-reader.js';
import { shapeOutOfRange } from '../../eval/problem/shape-sweep-evaluator.js';
import { pythonExecutable } from '../io/python-executable.js';
import { UsageError } from '../io/usage-error.js';

/**
 * The problem-folder reader of a command: `python3 -m kforge_worker describe` under the worker's
 * Python (`KFORGE_PYTHON`) and package (`KFORGE_WORKER_DIR`, else this checkout's worker/).
 */
export function problemFolderReaderFor(wiring: { environment: NodeJS.ProcessEnv; cwd: string }): ProblemFolderReader {
  const { environment, cwd } = wiring;
  return createProblemFolderReader({
    python: pythonExecutable(environment),
    workerDirectory: environment.KFORGE_WORKER_DIR ? path.resolve(cwd, environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
    environment,
  });
}

/** What the command flags ask of a problem's shapes. */
export interface ShapeFlags {
  /** `--shape N`. */
  shape?: number | undefined;
  /** `--fit`: sizes of this machine's choosing, which a folder's shapes leave no room for. */
  fit?: boolean;
}

/**
 * A problem as a command was given it, checked before anything is evaluated: a single-file
 * problem (`folder` null), or a problem folder read by the worker (`problemPath` its reference.py).
 * Misuse is a {@link UsageError} naming what to do: a folder the worker cannot use (its message),
 * `--shape` on a single file or past the folder's shapes, `--fit` with a folder.
 */
export async function checkedProblem(
  problemPath: string,
  flags: ShapeFlags,
  readFolder: ProblemFolderReader,
): Promise<{ problemPath: string; folder: ProblemFolder | null }> {
  if ((await problemFolderOf(problemPath)) === null) {
    if (flags.shape !== undefined)
      throw new UsageError(`--shape picks a shape of a problem folder (reference.py with shapes.py); ${problemPath} is a single-file problem`);
    return { problemPath, folder: null };
  }
  const reading = await readFolder(problemPath);
  if (reading.kind === 'invalid') throw new UsageError(reading.message);
  if (reading.kind === 'file') return { problemPath, folder: null };
  const { folder } = reading;
  if (flags.fit) {
    throw new UsageError(
      `--fit sizes a problem's own constants, and the problem folder ${folder.folder} sets them per shape: pick a shape with --shape N and give sizes with --set NAME=VALUE`,
    );
  }
  if (flags.shape !== undefined) {
    if (folder.shapes.length === 0) throw new UsageError(`--shape ${flags.shape}: the problem folder ${folder.folder} has no shapes.py`);
    if (flags.shape >= folder.shapes.length) throw new UsageError(shapeOutOfRange(flags.shape, folder));
  }
  return { problemPath: folder.reference, folder };
}

/**
 * What each problem folder among `problems` declares, for the prompt (docs/problems.md); each is
 * read by the worker first, so a folder it cannot use (or `--fit` with one) is a usage error now,
 * before any model call.
 */
export async function problemFolderNotes(
  problems: readonly string[],
  fit: boolean,
  readFolder: ProblemFolderReader,
): Promise<Record<string, ProblemFolderNotes>> {
  const notes: Record<string, ProblemFolderNotes> = {};
  for (const problem of problems) {
    const { folder } = await checkedProblem(problem, { fit }, readFolder);
    if (!folder) continue;
    notes[problem] = {
      name: folder.name,
      shapes: folder.shapes.map((shape) => shape.values),
      forbidden: folder.forbidden,
      ...(folder.tolerance !== undefined && folder.tolerance !== null ? { tolerance: folder.tolerance } : {}),
    };
  }
  return notes;
}
