import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { KernelModel, KernelModelRequest, ModelDescription, ModelReply } from '../kernel-model.js';
import { ModelConfigurationError } from '../model-configuration-error.js';
import { ModelExhaustedError } from '../model-exhausted-error.js';

/** `.py` files are candidates (wrapped in a fence); `.md` and `.txt` files are whole recorded replies. */
const CANDIDATE_EXTENSIONS = new Set(['.py']);
const REPLY_EXTENSIONS = new Set(['.md', '.txt']);

export interface FilesKernelModelOptions {
  /** Model id for records. Default: the folder's absolute path. */
  modelId?: string;
  /** Injected for tests: current time, Unix epoch milliseconds. */
  now?: () => number;
  /**
   * Replies an earlier part of the run already took (a resumed run): the replay starts at the file
   * after them. Default 0; at least the number of files means nothing is left to serve.
   */
  skip?: number;
}

/**
 * A `KernelModel` that replays a folder: each `generate()` returns the next file, in name order
 * (numeric-aware: `2.py` before `10.py`; hidden files and other extensions skipped). A `.py` file
 * is returned as a reply holding it in one ```python block, so hand-written kernels and earlier
 * runs go through the same extraction, search, store and reports as a model's replies. A `.md` or
 * `.txt` file is returned verbatim (a stored raw reply). Usage and cost are zero. When the files
 * run out, `generate()` throws `ModelExhaustedError`.
 */
export class FilesKernelModel implements KernelModel {
  private readonly files: readonly string[];
  private readonly modelId: string;
  private readonly now: () => number;
  private served: number;

  private constructor(files: readonly string[], modelId: string, now: () => number, skip: number) {
    this.files = files;
    this.modelId = modelId;
    this.now = now;
    this.served = Math.min(skip, files.length);
  }

  /**
   * Lists the folder once. Throws `ModelConfigurationError` when it cannot be read or holds no
   * `.py`, `.md` or `.txt` file, and `RangeError` for a `skip` that is not a non-negative integer.
   */
  static async fromDirectory(dir: string, options: FilesKernelModelOptions = {}): Promise<FilesKernelModel> {
    const skip = options.skip ?? 0;
    if (!Number.isSafeInteger(skip) || skip < 0) throw new RangeError(`expected \`skip\` to be a non-negative integer, got ${skip}`);
    const absolute = resolve(dir);
    let names: string[];
    try {
      const entries = await readdir(absolute, { withFileTypes: true });
      const listed = entries
        .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && !entry.name.startsWith('.'))
        .filter((entry) => CANDIDATE_EXTENSIONS.has(extname(entry.name)) || REPLY_EXTENSIONS.has(extname(entry.name)));
      // A link counts when it leads to a file (a folder of replies may link to shipped candidates).
      const kept = await Promise.all(listed.map(async (entry) => (entry.isFile() || (await stat(join(absolute, entry.name))).isFile() ? entry.name : null)));
      names = kept.filter((name): name is string => name !== null);
    } catch (error) {
      throw new ModelConfigurationError(`The files provider cannot read the folder ${absolute}; check --dir.`, {
        provider: 'files',
        setting: '--dir',
        cause: error,
      });
    }
    if (names.length === 0) {
      throw new ModelConfigurationError(`The folder ${absolute} holds no candidate files (.py) or recorded replies (.md, .txt); check --dir.`, {
        provider: 'files',
        setting: '--dir',
      });
    }
    names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    return new FilesKernelModel(
      names.map((name) => join(absolute, name)),
      options.modelId ?? absolute,
      options.now ?? Date.now,
      skip,
    );
  }

  describe(): ModelDescription {
    return { provider: 'files', modelId: this.modelId };
  }

  /** Files not yet served. */
  remaining(): number {
    return this.files.length - this.served;
  }

  async generate(request: KernelModelRequest): Promise<ModelReply> {
    request.signal?.throwIfAborted();
    const startedAt = this.now();
    const file = this.files[this.served];
    if (file === undefined) {
      throw new ModelExhaustedError(`The files provider has served all ${this.files.length} file(s) of ${this.modelId}.`, {
        provider: 'files',
        modelId: this.modelId,
        repliesServed: this.served,
      });
    }
    this.served++;
    const content = await readFile(file, 'utf8');
    const text = CANDIDATE_EXTENSIONS.has(extname(file)) ? fencePython(content) : content;
    return {
      text,
      usage: { inputTokens: 0, outputTokens: 0 },
      latencyMs: this.now() - startedAt,
      costUsd: 0,
      priced: true,
      provider: 'files',
      modelId: this.modelId,
      finishReason: 'stop',
      attempts: 1,
      failedAttempts: [],
      warnings: [],
      sourceFile: file,
    };
  }
}

/** Wraps code in a ```python fence longer than any backtick run inside it. */
function fencePython(code: string): string {
  const longestRun = Math.max(0, ...[...code.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  const body = code.endsWith('\n') ? code : `${code}\n`;
  return `${fence}python\n${body}${fence}\n`;
}
