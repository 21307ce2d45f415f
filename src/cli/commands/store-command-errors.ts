import { StoreDataError } from '../../store/errors/store-data-error.js';
import { StoreNotFoundError } from '../../store/errors/store-not-found-error.js';
import { StoreOpenError } from '../../store/errors/store-open-error.js';
import { StoreSchemaError } from '../../store/errors/store-schema-error.js';
import { EXIT } from '../io/cli-io.js';
import { UsageError } from '../io/usage-error.js';

/** Errors of a store-reading command that are the user's to fix: a bad flag, a store that is missing, unopenable or of another schema. */
const USAGE_ERRORS = [UsageError, StoreNotFoundError, StoreOpenError, StoreSchemaError];

/**
 * The exit status and message of a store-reading command (`runs`, `report`, `export`) that threw:
 * 2 with the message for misuse, 1 for a store whose data cannot be read; anything else is a fault
 * of kforge and is thrown again.
 *
 * @example catch (error) { io.setExitCode(storeCommandFailure('report', error, io.stderr)); }
 */
export function storeCommandFailure(command: string, error: unknown, stderr: { write: (text: string) => unknown }): number {
  const usage = USAGE_ERRORS.some((kind) => error instanceof kind);
  if (!usage && !(error instanceof StoreDataError)) throw error;
  stderr.write(`kforge ${command}: ${(error as Error).message}\n`);
  return usage ? EXIT.usage : 1;
}
