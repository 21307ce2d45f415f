/** Base of every error the store throws for its own faults or its caller's, so callers can catch one type. */
export class StoreError extends Error {
  override readonly name: string = 'StoreError';
}
