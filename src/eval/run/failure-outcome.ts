import { diagnoseCompilerOutput, formatCompilerError } from './diagnostics.js';
import type { Outcome } from './outcome.js';
import type { MessageOfType } from '../process/protocol.js';

/** Stages whose failures are worth a look for compiler or loader diagnostics. */
const BUILD_STAGES = new Set(['build', 'load']);

/**
 * Turns a worker's `failure` message into an outcome: its kind is the verdict, its check and
 * message the reason. For a build or load failure the compiler output is searched for the first
 * error and a known cause, which are added to the reason and kept in the diagnostics.
 */
export function outcomeOfFailure(failure: MessageOfType<'failure'>, cudaVersion: string | null): Outcome {
  const diagnostics: NonNullable<Outcome['diagnostics']> = {};
  if (failure.compiler_output) diagnostics.compiler = failure.compiler_output;
  if (failure.traceback) diagnostics.traceback = failure.traceback;
  let message = failure.message;
  if (BUILD_STAGES.has(failure.stage) || failure.kind === 'compile_error') {
    const searched = [failure.compiler_output, failure.message, failure.traceback].filter(Boolean).join('\n');
    const { firstError, knownCause } = diagnoseCompilerOutput(searched, { cudaVersion });
    if (firstError) {
      diagnostics.first_error = formatCompilerError(firstError);
      if (!message.includes(firstError.message)) message = `${message} (first error: ${diagnostics.first_error})`;
    }
    if (knownCause) {
      diagnostics.known_cause = knownCause.message;
      message = `${message}; ${knownCause.message}`;
    }
  }
  return { verdict: failure.kind, reasons: [{ check: failure.check, message }], diagnostics };
}
