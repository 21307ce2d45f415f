import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the repository (the folder above test-support/). */
export const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Folder of the fixture files. */
export const FIXTURES_DIRECTORY = path.join(REPOSITORY_ROOT, 'test-support', 'fixtures');

/** Path of a fixture file, e.g. `fixturePath('workers', 'segfault.py')`. */
export function fixturePath(...parts: string[]): string {
  return path.join(FIXTURES_DIRECTORY, ...parts);
}

/** The Python the tests run fixtures with: `KFORGE_PYTHON`, else `python3`. */
export const TEST_PYTHON = process.env.KFORGE_PYTHON ?? 'python3';
