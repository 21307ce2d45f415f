import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FilesKernelModel } from './files-kernel-model.js';
import type { KernelModel, KernelModelRequest, ModelDescription, ModelReply } from '../kernel-model.js';
import { ModelConfigurationError } from '../model-configuration-error.js';

/** One problem of the run, by the name its search reports (the file stem). */
export interface ReplayedProblem {
  /** The problem's file stem (`02_gelu`): the subfolder of the replies folder it may have. */
  name: string;
  /** Replies this problem's search already took (a resumed run). Default 0. */
  repliesServed?: number;
}

export interface PerProblemFilesKernelModelOptions {
  /** The run's problems, in run order. */
  problems: readonly ReplayedProblem[];
  /** Model id for records. Default: the folder's absolute path. */
  modelId?: string;
  /** Injected for tests: current time, Unix epoch milliseconds. */
  now?: () => number;
}

/** The stem a run gives a problem that shares its file stem with another: `01_x-1a2b3c4d`. */
const HASH_SUFFIX = /-[0-9a-f]{8}$/;

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() === true;
}

/**
 * The `files` provider of a run with one or more problems: `DIR/<problem stem>/` holds that
 * problem's replies where it exists (`DIR/02_gelu/1.py`, …), and `DIR` itself serves every problem
 * without a subfolder, one reply after another across them (as a single {@link FilesKernelModel}).
 * Each folder is replayed by its own `FilesKernelModel`, resumed past the replies its problems
 * already took. Which problem is being searched is told with {@link select} (problems are searched
 * one at a time).
 */
export class PerProblemFilesKernelModel implements KernelModel {
  private current: FilesKernelModel | undefined;

  private constructor(
    private readonly root: string,
    private readonly modelId: string,
    private readonly folders: ReadonlyMap<string, FilesKernelModel>,
    private readonly folderOfProblem: ReadonlyMap<string, string>,
  ) {
    this.current = folders.get(folderOfProblem.values().next().value ?? root);
  }

  /**
   * Lists `dir` and the subfolders named after the problems. Throws `ModelConfigurationError`
   * (setting `--dir`) when a folder cannot be read, or when a problem has neither a subfolder with
   * replies nor replies in `dir` itself.
   */
  static async fromDirectory(dir: string, options: PerProblemFilesKernelModelOptions): Promise<PerProblemFilesKernelModel> {
    const root = resolve(dir);
    const modelId = options.modelId ?? root;
    const folderOfProblem = new Map<string, string>();
    const servedByFolder = new Map<string, number>();
    for (const problem of options.problems) {
      const folder = (await isFolder(join(root, problem.name))) ? join(root, problem.name) : root;
      folderOfProblem.set(problem.name, folder);
      servedByFolder.set(folder, (servedByFolder.get(folder) ?? 0) + (problem.repliesServed ?? 0));
    }
    if (servedByFolder.size === 0) servedByFolder.set(root, 0);
    const folders = new Map<string, FilesKernelModel>();
    for (const [folder, skip] of servedByFolder) {
      const model = await FilesKernelModel.fromDirectory(folder, { modelId, skip, ...(options.now ? { now: options.now } : {}) }).catch((error: unknown) => {
        if (folder !== root || !(error instanceof ModelConfigurationError)) throw error;
        const without = [...folderOfProblem].flatMap(([name, chosen]) => (chosen === root ? [name] : []));
        throw new ModelConfigurationError(
          `The files provider has no replies for ${without.join(', ')}: ${root} has no subfolder named after ${without.length === 1 ? 'it' : 'them'} and no .py, .md or .txt files of its own; check --dir.`,
          { provider: 'files', setting: '--dir', cause: error },
        );
      });
      folders.set(folder, model);
    }
    return new PerProblemFilesKernelModel(root, modelId, folders, folderOfProblem);
  }

  /** The folder a problem's replies come from (absolute). */
  folderOf(problemName: string): string {
    return this.folderOfProblem.get(problemName) ?? this.folderOfProblem.get(problemName.replace(HASH_SUFFIX, '')) ?? this.root;
  }

  /** Routes the following calls to the problem's folder (a name with a run's hash suffix finds its stem's). */
  select(problemName: string): void {
    this.current = this.folders.get(this.folderOf(problemName));
  }

  describe(): ModelDescription {
    return { provider: 'files', modelId: this.modelId };
  }

  /** Replies not yet served from the folder of the selected problem. */
  remaining(): number {
    return this.current?.remaining() ?? 0;
  }

  async generate(request: KernelModelRequest): Promise<ModelReply> {
    if (!this.current) {
      throw new ModelConfigurationError(`The files provider has no replies for this problem in ${this.root}; check --dir.`, {
        provider: 'files',
        setting: '--dir',
      });
    }
    return this.current.generate(request);
  }
}
