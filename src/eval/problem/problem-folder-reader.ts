import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';
import { META_FILE, problemFolderOf, problemFolderSchema, REFERENCE_FILE, SHAPES_FILE, type ProblemFolder } from './problem-folder.js';

/**
 * What a problem path is: a single-file problem, a problem folder as read, or a folder that cannot
 * be used (`check` and `message` as the worker says it: `problem-load`, naming the file and what to write).
 */
export type ProblemFolderReading = { kind: 'file' } | { kind: 'folder'; folder: ProblemFolder } | { kind: 'invalid'; check: string; message: string };

/** Reads the problem folder a problem path stands for (see {@link createProblemFolderReader}). */
export type ProblemFolderReader = (problemPath: string) => Promise<ProblemFolderReading>;

export interface ProblemFolderReaderOptions {
  /** The Python the worker runs under. */
  python: string;
  /** The folder holding `kforge_worker/`. */
  workerDirectory: string;
  environment: NodeJS.ProcessEnv;
  /** Limit on the describe process, ms. Default 60 000. */
  timeoutMs?: number;
}

const failureSchema = z.object({ error: z.object({ check: z.string().default('problem-load'), message: z.string() }) });

/** A folder's three files' modification times: a folder edited since it was read is read again. */
async function folderStamp(folder: string): Promise<string> {
  const times = await Promise.all(
    [REFERENCE_FILE, SHAPES_FILE, META_FILE].map((name) =>
      stat(path.join(folder, name)).then(
        (info) => String(info.mtimeMs),
        () => '-',
      ),
    ),
  );
  return times.join(':');
}

/**
 * A reader of problem folders through `python3 -m kforge_worker describe` (in a short process with
 * a worker's environment), each folder read once while its files are unchanged. A single-file
 * problem is told from the file system alone: nothing runs for it. Throws `EvaluatorSetupError`
 * when the describe command itself cannot run (no Python, no worker package).
 */
export function createProblemFolderReader(options: ProblemFolderReaderOptions): ProblemFolderReader {
  const known = new Map<string, { stamp: string; reading: ProblemFolderReading }>();
  return async (problemPath) => {
    const folder = await problemFolderOf(problemPath);
    if (folder === null) return { kind: 'file' };
    const stamp = await folderStamp(folder);
    const cached = known.get(folder);
    if (cached?.stamp === stamp) return cached.reading;
    const reading = await describeFolder(folder, options);
    known.set(folder, { stamp, reading });
    return reading;
  };
}

async function describeFolder(folder: string, options: ProblemFolderReaderOptions): Promise<ProblemFolderReading> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'kforge-describe-'));
  try {
    const env = buildWorkerEnvironment(options.environment, { homeDirectory: scratch, temporaryDirectory: scratch, workerDirectory: options.workerDirectory });
    const result = await execa(options.python, ['-m', 'kforge_worker', 'describe', folder], {
      cwd: scratch,
      env,
      extendEnv: false,
      reject: false,
      timeout: options.timeoutMs ?? 60_000,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(result.stdout).trim());
    } catch {
      const said = String(result.stderr).trim().split('\n').at(-1) ?? '';
      throw new EvaluatorSetupError(
        `the worker could not read the problem folder ${folder} (${options.python} -m kforge_worker describe, exit status ${result.exitCode ?? result.signal})${said ? `: ${said}` : ''}`,
        { hint: 'run `kforge doctor`', stderr: String(result.stderr) },
      );
    }
    const failure = failureSchema.safeParse(parsed);
    if (failure.success) return { kind: 'invalid', ...failure.data.error };
    if ((parsed as { folder?: unknown } | null)?.folder === null) return { kind: 'file' };
    const described = problemFolderSchema.safeParse(parsed);
    if (!described.success) {
      const issue = described.error.issues[0];
      throw new EvaluatorSetupError(`the worker's description of the problem folder ${folder} is malformed: ${issue?.path.join('.')}: ${issue?.message}`);
    }
    return { kind: 'folder', folder: described.data };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
