import { StoreError } from './store-error.js';

/** The file exists but cannot be used as a store (not an SQLite database, unreadable, locked). */
export class StoreOpenError extends StoreError {
  override readonly name = 'StoreOpenError';
  readonly path: string;

  constructor(path: string, options: { cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`cannot open the kforge store at ${path} (${reason}): pass --store PATH to a kforge database`, options);
    this.path = path;
  }
}
