import type { Migration, MigrationProvider } from 'kysely';
import { initialSchemaMigration } from './0001-initial-schema.js';

/**
 * Every schema migration, as code. Names sort in the order they run; a new migration gets the
 * next number and is never edited once released.
 */
export const STORE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial_schema': initialSchemaMigration,
};

/** The newest migration this version knows. */
export const LATEST_STORE_MIGRATION = Object.keys(STORE_MIGRATIONS).sort().at(-1) ?? '';

/** A kysely migration provider over {@link STORE_MIGRATIONS}: no file-system globbing, so it works from tsx and from a tsc build. */
export const storeMigrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...STORE_MIGRATIONS }),
};
