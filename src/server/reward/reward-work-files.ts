import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RewardProblem } from './reward-problem-resolver.js';

/**
 * The files the evaluator reads for reward requests: a snapshot of each problem that is not a
 * shipped file (one per content hash, kept until close) and each candidate's file (removed once
 * its evaluation is over). They live in `directory`, or in a fresh temporary folder that `close`
 * removes.
 */
export class RewardWorkFiles {
  readonly #given: string | undefined;
  #root: Promise<string> | undefined;
  readonly #problems = new Map<string, Promise<string>>();

  constructor(directory?: string) {
    this.#given = directory;
  }

  /** The file holding the problem: the shipped file itself, else a snapshot named by its hash. */
  problemPath(problem: RewardProblem): Promise<string> {
    if (problem.path !== null) return Promise.resolve(problem.path);
    let file = this.#problems.get(problem.hash);
    if (!file) {
      file = this.#write(path.join('problems', `${problem.hash}.py`), problem.source);
      file.catch(() => this.#problems.delete(problem.hash));
      this.#problems.set(problem.hash, file);
    }
    return file;
  }

  /** Writes a candidate's file, named by its request's hash (one evaluation per hash at a time). */
  writeCandidate(requestHash: string, source: string): Promise<string> {
    return this.#write(path.join('candidates', `${requestHash}.py`), source);
  }

  async removeCandidate(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** Removes the folder when this object made it; a given folder keeps its problem snapshots. */
  async close(): Promise<void> {
    if (this.#given === undefined && this.#root) await rm(await this.#root.catch(() => ''), { recursive: true, force: true }).catch(() => undefined);
  }

  async #write(relative: string, text: string): Promise<string> {
    this.#root ??=
      this.#given === undefined
        ? mkdtemp(path.join(os.tmpdir(), 'kforge-reward-'))
        : mkdir(this.#given, { recursive: true }).then(() => path.resolve(this.#given!));
    const file = path.join(await this.#root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text, 'utf8');
    return file;
  }
}
