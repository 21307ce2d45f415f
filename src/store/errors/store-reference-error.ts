import { StoreError } from './store-error.js';

/** What a {@link StoreReferenceError} refers to. */
export type StoreEntity = 'run' | 'problem' | 'candidate' | 'idea' | 'model call' | 'evaluation';

/** A write or lookup named a run, problem, candidate or idea that does not exist where it must. */
export class StoreReferenceError extends StoreError {
  override readonly name = 'StoreReferenceError';
  readonly entity: StoreEntity;
  readonly id: string | number;

  /** `detail` completes "no <entity> <id>": `in run 2026…`, `among the run's problems`. */
  constructor(entity: StoreEntity, id: string | number, detail?: string) {
    super(`no ${entity} \`${id}\`${detail ? ` ${detail}` : ''}`);
    this.entity = entity;
    this.id = id;
  }
}
