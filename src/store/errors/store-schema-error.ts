import { StoreError } from './store-error.js';

/** The database was written by a newer kforge: it holds migrations this version does not know. */
export class StoreSchemaError extends StoreError {
  override readonly name = 'StoreSchemaError';
  readonly path: string;
  /** Migrations recorded in the database that this version does not have. */
  readonly unknownMigrations: readonly string[];
  /** The newest migration this version knows. */
  readonly latestKnownMigration: string;

  constructor(path: string, unknownMigrations: readonly string[], latestKnownMigration: string) {
    super(
      `the kforge store at ${path} was written by a newer kforge (schema ${unknownMigrations.join(', ')}; ` +
        `this version knows up to ${latestKnownMigration}): upgrade kforge, or pass --store PATH to another database`,
    );
    this.path = path;
    this.unknownMigrations = unknownMigrations;
    this.latestKnownMigration = latestKnownMigration;
  }
}
