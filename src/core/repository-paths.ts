import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the kforge checkout (two folders above this file). */
export const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Folder holding the Python `kforge_worker` package, put on the workers' PYTHONPATH. */
export const WORKER_DIRECTORY = path.join(REPOSITORY_ROOT, 'worker');
