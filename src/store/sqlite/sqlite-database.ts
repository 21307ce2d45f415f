import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';
import { StoreNotFoundError } from '../errors/store-not-found-error.js';
import { StoreOpenError } from '../errors/store-open-error.js';
import { StoreSchemaError } from '../errors/store-schema-error.js';
import { LATEST_STORE_MIGRATION, STORE_MIGRATIONS, storeMigrationProvider } from '../migrations/store-migrations.js';
import type { StoreDatabase } from './sqlite-database-schema.js';

/** How long a write waits for another process's write to finish before failing, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export interface OpenSqliteDatabaseOptions {
  /** File path, or `:memory:`. */
  path: string;
  /** Fail with `StoreNotFoundError` instead of creating the file. */
  mustExist?: boolean;
  busyTimeoutMs?: number;
}

/**
 * Transactions start with `BEGIN IMMEDIATE`: the write lock is taken at the start, so two
 * processes writing at once wait for each other (up to the busy timeout) instead of one failing
 * with SQLITE_BUSY when a read transaction tries to become a write.
 */
class ImmediateTransactionSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateTransactionSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionSqliteDriver(this.#config);
  }
}

/** Migrations recorded in the file that this version does not know (none in a new file). */
function unknownMigrations(database: Database.Database): string[] {
  const table = database.prepare("select name from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!table) return [];
  const rows = database.prepare('select name from kysely_migration').all() as Array<{ name: string }>;
  return rows.map((row) => row.name).filter((name) => !(name in STORE_MIGRATIONS));
}

function openConnection(options: OpenSqliteDatabaseOptions): Database.Database {
  let database: Database.Database | undefined;
  try {
    database = new Database(options.path, { fileMustExist: options.mustExist ?? false });
    database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
    database.pragma('journal_mode = WAL');
    // FULL: a committed evaluation survives a power cut too, not only a killed process.
    database.pragma('synchronous = FULL');
    database.pragma('foreign_keys = ON');
    return database;
  } catch (error) {
    database?.close();
    throw new StoreOpenError(options.path, { cause: error });
  }
}

/**
 * Opens (creating when allowed) an SQLite store file, refuses one written by a newer schema,
 * and brings an older one up to date. WAL journal, foreign keys on, busy timeout set.
 *
 * @throws StoreNotFoundError when `mustExist` is set and there is no file.
 * @throws StoreOpenError when the file is not an SQLite database or cannot be opened.
 * @throws StoreSchemaError when the file holds migrations this version does not know.
 */
export async function openSqliteDatabase(options: OpenSqliteDatabaseOptions): Promise<Kysely<StoreDatabase>> {
  if (options.mustExist && options.path !== ':memory:' && !existsSync(options.path)) throw new StoreNotFoundError(options.path);
  const database = openConnection(options);
  let unknown: string[];
  try {
    unknown = unknownMigrations(database);
  } catch (error) {
    database.close();
    throw new StoreOpenError(options.path, { cause: error });
  }
  if (unknown.length > 0) {
    database.close();
    throw new StoreSchemaError(options.path, unknown, LATEST_STORE_MIGRATION);
  }
  const db = new Kysely<StoreDatabase>({ dialect: new ImmediateTransactionSqliteDialect({ database }) });
  const { error } = await new Migrator({ db, provider: storeMigrationProvider }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw new StoreOpenError(options.path, { cause: error });
  }
  return db;
}
