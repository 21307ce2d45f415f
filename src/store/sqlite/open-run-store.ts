import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { RunStore } from '../run-store.js';
import { DEFAULT_STORE_PATH } from './default-store-path.js';
import { SqliteRunStore } from './sqlite-run-store.js';

export { DEFAULT_STORE_PATH } from './default-store-path.js';

export interface OpenRunStoreOptions {
  /** Database file; relative paths are taken from `cwd`. Default {@link DEFAULT_STORE_PATH}. */
  path?: string;
  /** Default `process.cwd()`. */
  cwd?: string;
  /** Throw `StoreNotFoundError` instead of creating a missing store (for commands that only read). */
  mustExist?: boolean;
  /** Clock for stored times. Default `() => new Date()`. */
  now?: () => Date;
}

/** The absolute path a store option names. */
export function resolveStorePath(options: Pick<OpenRunStoreOptions, 'path' | 'cwd'> = {}): string {
  return resolve(options.cwd ?? process.cwd(), options.path ?? DEFAULT_STORE_PATH);
}

/**
 * Opens the run store, creating its folder and file unless `mustExist` is set.
 *
 * @example const store = await openRunStore({ path: options.store, mustExist: true });
 * @throws StoreNotFoundError, StoreOpenError, StoreSchemaError
 */
export async function openRunStore(options: OpenRunStoreOptions = {}): Promise<RunStore> {
  const path = resolveStorePath(options);
  if (!options.mustExist) mkdirSync(dirname(path), { recursive: true });
  return SqliteRunStore.open({ path, mustExist: options.mustExist ?? false, ...(options.now ? { now: options.now } : {}) });
}
