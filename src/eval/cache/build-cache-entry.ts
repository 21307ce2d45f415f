import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { buildKeyMaterialSchema } from './build-key.js';
import { isContainedPath } from './build-snapshot.js';

/** What the build cache records about one build folder, in `<key>.json` beside it. */
export const buildCacheEntrySchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  material: buildKeyMaterialSchema,
  /** ISO 8601 times of the first reservation and the last one. */
  created_at: z.string(),
  last_used_at: z.string(),
  /** Bytes of the build folder after the last use. */
  size_bytes: z.number().int().nonnegative(),
  /** Evaluations that used the folder. */
  uses: z.number().int().nonnegative(),
  /** Uses in which the worker compiled or linked something (the others were cache hits). */
  builds: z.number().int().nonnegative(),
  /** Uses in which the worker found everything built already. */
  hits: z.number().int().nonnegative(),
  /** The last use built successfully and its files are kept here (a failed build keeps nothing). */
  complete: z.boolean(),
  /**
   * SHA-256 of every file the parent copied into the cache folder, by relative path; checked before
   * each reuse. An entry without it (written before kforge copied builds itself) is never reused.
   */
  files: z.record(z.string().refine(isContainedPath, 'a relative path inside the build folder'), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
});
export type BuildCacheEntry = z.infer<typeof buildCacheEntrySchema>;

/** The entry in `file`, or null when it is missing or does not validate. */
export async function readBuildCacheEntry(file: string): Promise<BuildCacheEntry | null> {
  try {
    const parsed = buildCacheEntrySchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Writes an entry atomically (a temporary file renamed over the target). */
export async function writeBuildCacheEntry(file: string, entry: BuildCacheEntry): Promise<void> {
  const valid = buildCacheEntrySchema.parse(entry);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(valid, null, 2)}\n`, 'utf8');
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
