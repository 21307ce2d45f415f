import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Bytes of every regular file under `directory` (links not followed); 0 when it does not exist. */
export async function directorySizeBytes(directory: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    throw error;
  }
  let total = 0;
  for (const entry of entries) {
    const child = path.join(directory, entry.name);
    if (entry.isDirectory()) total += await directorySizeBytes(child);
    else if (entry.isFile())
      total += await lstat(child).then(
        (info) => info.size,
        () => 0,
      );
  }
  return total;
}
