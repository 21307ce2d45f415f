import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CliIo } from './cli-io.js';

/**
 * Writes a command's document to standard output, or with `--out FILE` to that file (relative to
 * the working directory), saying on standard error where it went: `written(file)` gives the line.
 */
export async function writeCommandOutput(io: CliIo, out: string | undefined, text: string, written: (file: string) => string): Promise<void> {
  if (!out) {
    io.stdout.write(text);
    return;
  }
  const file = path.resolve(io.cwd, out);
  await writeFile(file, text, 'utf8');
  io.stderr.write(`${written(file)}\n`);
}
