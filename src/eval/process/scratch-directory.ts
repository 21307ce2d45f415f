import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The folders of one evaluation's scratch directory. */
export interface ScratchDirectory {
  /** The directory itself: the workers' working directory. */
  path: string;
  /**
   * Copies of the problem and candidate files the candidate worker reads (written by the parent,
   * read-only to the candidate; see docs/security.md).
   */
  inputDirectory: string;
  /** Where the candidate saves its outputs (`output_dir`). */
  outputDirectory: string;
  /** Where extensions are built (`build_dir`, `TORCH_EXTENSIONS_DIR`). */
  buildDirectory: string;
  /** The workers' `HOME`. */
  homeDirectory: string;
  /** The workers' `TMPDIR`. */
  temporaryDirectory: string;
  /** Removes everything, unless the directory is kept. Safe to call twice. */
  remove(): Promise<void>;
  /** The directory stays after the evaluation (`KFORGE_KEEP_SCRATCH=1`): its files are not deleted either. */
  keep?: boolean;
}

export interface ScratchDirectoryOptions {
  /** Parent folder; the system's temporary folder by default. */
  root?: string;
  /** Leave the directory in place after the evaluation (`KFORGE_KEEP_SCRATCH=1`). */
  keep?: boolean;
}

/** Creates a fresh `kforge-XXXXXX` directory with its `in`, `out`, `build`, `home` and `tmp` folders. */
export async function createScratchDirectory(options: ScratchDirectoryOptions = {}): Promise<ScratchDirectory> {
  const directory = await mkdtemp(path.join(options.root ?? os.tmpdir(), 'kforge-'));
  const folders = {
    inputDirectory: path.join(directory, 'in'),
    outputDirectory: path.join(directory, 'out'),
    buildDirectory: path.join(directory, 'build'),
    homeDirectory: path.join(directory, 'home'),
    temporaryDirectory: path.join(directory, 'tmp'),
  };
  await Promise.all(Object.values(folders).map((folder) => mkdir(folder)));
  return {
    path: directory,
    ...folders,
    keep: options.keep === true,
    remove: async () => {
      if (!options.keep) await rm(directory, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
