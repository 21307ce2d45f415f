import { StoreError } from './store-error.js';

/** Input to a store method was malformed; `field` names the offending input field. */
export class StoreValidationError extends StoreError {
  override readonly name = 'StoreValidationError';
  readonly field: string;

  constructor(field: string, message: string, options?: { cause: unknown }) {
    super(`invalid \`${field}\`: ${message}`, options);
    this.field = field;
  }
}
