import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../store/content-hash.js';
import type { RunStore } from '../../store/run-store.js';
import { ApiError } from '../http/api-error.js';

/** A problem a reward request names, with its content. */
export interface RewardProblem {
  /** sha256 of `source`. */
  hash: string;
  /** Name it is stored under: the file stem of a shipped problem (`02_gelu`), the stored name, or `inline-<hash>`. */
  name: string;
  source: string;
  /** The shipped file, when it is one (the evaluator reads it there); else null. */
  path: string | null;
  /** How the request named it, for messages: `level1/02_gelu`, a hash, or `problemSource`. */
  label: string;
}

/** One shipped problem, as `GET /api/reward/problems` lists it. */
export interface ShippedProblem {
  name: string;
  hash: string;
  path: string;
}

export interface RewardProblemResolverOptions {
  store: RunStore;
  /** The shipped problems' folder (`<repo>/problems`). */
  problemsDirectory: string;
}

const HASH = /^[0-9a-f]{64}$/;
const SHIPPED_NAME = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*(?:\.py)?$/;

/**
 * Turns what a request names into a problem's content: a shipped problem by name (`level1/02_gelu`,
 * resolved under the problems folder, never outside it), a problem of the store by hash, or an
 * inline source.
 */
export class RewardProblemResolver {
  readonly #options: RewardProblemResolverOptions;

  constructor(options: RewardProblemResolverOptions) {
    this.#options = options;
  }

  /**
   * @throws ApiError 404 `unknown-problem` for a name or hash that names nothing, with the list's route.
   */
  async resolve(input: { problem?: string | undefined; problemSource?: string | undefined; problemName?: string | undefined }): Promise<RewardProblem> {
    if (input.problemSource !== undefined) {
      const hash = sha256Hex(input.problemSource);
      return { hash, name: input.problemName ?? `inline-${hash.slice(0, 12)}`, source: input.problemSource, path: null, label: 'problemSource' };
    }
    const named = input.problem ?? '';
    if (HASH.test(named)) {
      const record = await this.#options.store.getProblem(named);
      if (record) return { hash: record.hash, name: record.name, source: record.source, path: null, label: named };
    }
    const shipped = await this.#readShipped(named);
    if (shipped) return shipped;
    throw new ApiError(
      404,
      'unknown-problem',
      `no shipped problem \`${named}\` and no stored problem with that hash: GET /api/reward/problems lists the shipped ones (e.g. ${await this.#examples()}), or send the file as \`problemSource\``,
      { field: 'body.problem' },
    );
  }

  /** Every shipped problem, by name (`level1/02_gelu`), sorted. */
  async list(): Promise<ShippedProblem[]> {
    const root = this.#options.problemsDirectory;
    const entries = await readdir(root, { recursive: true }).catch(() => [] as string[]);
    const files = entries
      .filter((entry) => entry.endsWith('.py'))
      .map((entry) => entry.split(path.sep).join('/'))
      .sort();
    return Promise.all(
      files.map(async (file) => {
        const full = path.join(root, file);
        return { name: file.replace(/\.py$/, ''), hash: sha256Hex(await readFile(full, 'utf8')), path: full };
      }),
    );
  }

  async #readShipped(name: string): Promise<RewardProblem | null> {
    if (!SHIPPED_NAME.test(name)) return null;
    const root = path.resolve(this.#options.problemsDirectory);
    const file = path.resolve(root, name.endsWith('.py') ? name : `${name}.py`);
    if (path.relative(root, file).startsWith('..')) return null;
    const source = await readFile(file, 'utf8').catch(() => null);
    if (source === null) return null;
    return { hash: sha256Hex(source), name: path.basename(file, '.py'), source, path: file, label: name.replace(/\.py$/, '') };
  }

  async #examples(): Promise<string> {
    const names = (await this.list()).map((problem) => problem.name);
    return names.length === 0 ? 'none are shipped here' : `${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}`;
  }
}
