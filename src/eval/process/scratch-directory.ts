import { copyFile, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
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
  /**
   * `KFORGE_WORKER_PROFILE`: where the workers' profiles go. A sandboxed worker cannot write it and
   * writes {@link PROFILE_FALLBACK} in its temporary folder instead; those files are copied here
   * before the directory is removed.
   */
  profileDirectory?: string | undefined;
}

/** The folder of the worker's `TMPDIR` that holds its profile when it cannot write `KFORGE_WORKER_PROFILE` (sampling_profile.py). */
export const PROFILE_FALLBACK = 'kforge-profile';
/** Larger files there are not copied: they were not written by the profiler. */
const PROFILE_FILE_MAX_BYTES = 512 * 1024 * 1024;

/**
 * Copies the regular files of `<temporary>/kforge-profile` (a sandboxed worker's profile) into
 * `destination`. They were written by a worker that ran candidate code, so links and anything that
 * is not a plain file of a profile's size are left behind. Best effort: a diagnostic.
 */
async function collectProfiles(temporaryDirectory: string, destination: string): Promise<void> {
  const source = path.join(temporaryDirectory, PROFILE_FALLBACK);
  const names = await readdir(source).catch(() => [] as string[]);
  if (names.length === 0) return;
  await mkdir(destination, { recursive: true }).catch(() => undefined);
  for (const name of names) {
    const file = path.join(source, name);
    const info = await lstat(file).catch(() => null);
    if (!info?.isFile() || info.size > PROFILE_FILE_MAX_BYTES || !/^[\w.-]+$/.test(name)) continue;
    await copyFile(file, path.join(destination, name)).catch(() => undefined);
  }
}

/**
 * The candidate's hand-over socket: its launcher binds it in the `in` folder (read-only to the
 * candidate), and the judge connects to it for output descriptors (docs/worker-protocol.md).
 */
export function handoverSocketPath(scratch: Pick<ScratchDirectory, 'inputDirectory'>): string {
  return path.join(scratch.inputDirectory, 'handover.sock');
}

/** Creates a fresh `kforge-XXXXXX` directory with its `in`, `build`, `home` and `tmp` folders. */
export async function createScratchDirectory(options: ScratchDirectoryOptions = {}): Promise<ScratchDirectory> {
  const directory = await mkdtemp(path.join(options.root ?? os.tmpdir(), 'kforge-'));
  const folders = {
    inputDirectory: path.join(directory, 'in'),
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
      if (options.profileDirectory) await collectProfiles(folders.temporaryDirectory, options.profileDirectory);
      if (!options.keep) await rm(directory, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
