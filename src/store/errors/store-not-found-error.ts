import { StoreError } from './store-error.js';

/** The store was opened with `mustExist` and there is no database at `path`. */
export class StoreNotFoundError extends StoreError {
  override readonly name = 'StoreNotFoundError';
  readonly path: string;

  constructor(path: string) {
    super(`no kforge store at ${path}: run \`kforge optimize\` first, or pass --store PATH to the database it wrote`);
    this.path = path;
  }
}
