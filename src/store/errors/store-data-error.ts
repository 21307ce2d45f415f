import { StoreError } from './store-error.js';

/** A stored value failed validation on read: the row was written by other software or damaged. */
export class StoreDataError extends StoreError {
  override readonly name = 'StoreDataError';
  readonly table: string;
  readonly column: string;
  readonly rowId: string | number;

  constructor(location: { table: string; column: string; rowId: string | number }, options: { cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`stored ${location.table}.${location.column} of row ${location.rowId} is malformed: ${reason}`, options);
    this.table = location.table;
    this.column = location.column;
    this.rowId = location.rowId;
  }
}
