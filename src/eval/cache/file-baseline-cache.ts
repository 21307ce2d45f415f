import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cachedBaselinesSchema, type BaselineCache, type CachedBaselines } from './baseline-cache.js';

export interface FileBaselineCacheOptions {
  /** Folder of the JSON files, one per key; created on the first write. */
  directory: string;
}

/**
 * Baselines as JSON files named by key. Writes are atomic (a temporary file renamed over the
 * target), so a reader never sees half a file; a file that does not parse or validate is treated
 * as absent and is replaced by the next write.
 */
export class FileBaselineCache implements BaselineCache {
  readonly directory: string;

  constructor(options: FileBaselineCacheOptions) {
    this.directory = options.directory;
  }

  async get(key: string): Promise<CachedBaselines | null> {
    let text: string;
    try {
      text = await readFile(this.#file(key), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    const parsed = cachedBaselinesSchema.safeParse(value);
    return parsed.success && parsed.data.key === key ? parsed.data : null;
  }

  async put(entry: CachedBaselines): Promise<void> {
    const valid = cachedBaselinesSchema.parse(entry);
    await mkdir(this.directory, { recursive: true });
    const target = this.#file(valid.key);
    const temporary = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(valid, null, 2)}\n`, 'utf8');
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  #file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new RangeError(`expected a SHA-256 hex key, got \`${key}\``);
    return path.join(this.directory, `${key}.json`);
  }
}
