import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { MachineFaultError } from '../machine-fault-error.js';
import { meaningfulStderrLine, saysOutOfMemory } from '../process/stderr-summary.js';
import { WorkerFaultError } from '../process/worker-fault-error.js';
import { outcome, type Outcome } from './outcome.js';
import { limitFlag } from './stage-limits.js';
import { describeSignal } from '../process/signal-description.js';
import type { WorkerProcessResult } from '../process/worker-process-types.js';

/**
 * Turns the end of a candidate worker that stopped before sending `expected` into an outcome: a
 * time-out, a crash (signal or non-zero status) or a protocol failure. A worker that ended before
 * `hello` ran no problem or candidate code, so that is the machine's fault: an
 * {@link EvaluatorSetupError} (a {@link MachineFaultError} when it ran out of memory). A reference
 * worker's end is never the candidate's verdict: {@link MachineFaultError} or {@link WorkerFaultError}.
 * A cancelled evaluation throws {@link EvaluationCancelledError}.
 */
export function outcomeOfWorkerEnd(
  result: WorkerProcessResult,
  expected: string,
  helloSeen: boolean,
  /** Why a stage's limit is what it is (`5 × the reference's own time …`), said with a time-out; null: nothing to add. */
  limitBasis: (stage: string) => string | null = () => null,
): Outcome {
  const who = result.role === 'candidate' ? 'the candidate process' : 'the reference process (which never imports the candidate)';
  if (result.cancelled) throw new EvaluationCancelledError();
  if (!helloSeen) throw setupError(result);
  if (refusedRequest(result)) {
    throw new EvaluatorSetupError(`the ${result.role} worker refused the request: ${lastStderrLine(result.stderr) ?? `exit status ${WORKER_USAGE_STATUS}`}`, {
      hint: 'check the flags against this machine (`kforge doctor` lists what it has)',
      stderr: result.stderr,
    });
  }
  if (result.role === 'reference') throw referenceEnd(result, expected);
  if (result.timedOut) {
    const seconds = formatSeconds(result.timeLimitMs ?? 0);
    const flag = limitFlag(result.timedOut);
    if (result.timedOut === 'idle') {
      return outcome(
        'timeout',
        'timeout-idle',
        `${who} stopped responding outside any stage for ${seconds} while kforge waited for \`${expected}\`, and was killed; raise the limit with ${flag} if the machine is just slow`,
      );
    }
    const basis = limitBasis(result.timedOut);
    return outcome(
      'timeout',
      `timeout-${result.timedOut}`,
      `the ${result.timedOut} stage ran past its limit of ${seconds}${basis ? ` (${basis})` : ''} and was killed; if it is only slow, raise the limit with ${flag}`,
    );
  }
  if (result.protocolError) {
    return outcome('crashed', 'protocol', `${who} broke the worker protocol, so kforge stopped it: ${result.protocolError.message}`);
  }
  const during = result.stage ? ` during the ${result.stage} stage` : '';
  if (result.signal) {
    return outcome('crashed', 'crash', `${who} died${during} of ${describeSignal(result.signal)}`);
  }
  const lastLine = lastStderrLine(result.stderr);
  if (result.exitCode !== 0) {
    return outcome(
      'crashed',
      'crash',
      `${who} exited with status ${result.exitCode}${during} without reporting a failure${lastLine ? `; its last words on stderr: ${lastLine}` : ''}`,
    );
  }
  return outcome('crashed', 'protocol', `${who} exited${during} before sending \`${expected}\`${lastLine ? `; its last words on stderr: ${lastLine}` : ''}`);
}

/** The worker's exit status for a request it refuses (docs/worker-protocol.md). */
const WORKER_USAGE_STATUS = 2;

/**
 * Status 2 from a worker that ran no problem or candidate code yet: it refused kforge's request
 * (the cuda backend without a CUDA device, say). The reference role never runs candidate code,
 * and the candidate role runs it only inside its stages.
 */
function refusedRequest(result: WorkerProcessResult): boolean {
  if (result.exitCode !== WORKER_USAGE_STATUS || result.signal || result.timedOut || result.protocolError) return false;
  return result.role === 'reference' || (result.stage === null && Object.keys(result.stageDurationsMs).length === 0);
}

/**
 * The end of a reference worker that said hello and then stopped without its answer: never the
 * candidate's verdict, since that process never runs candidate code. Out of time or killed (the
 * kernel's out-of-memory killer sends SIGKILL) is the machine's; a traceback or a protocol breach
 * is kforge's own fault.
 */
function referenceEnd(result: WorkerProcessResult, expected: string): MachineFaultError | WorkerFaultError {
  const during = result.stage ? ` during the ${result.stage} stage` : '';
  const said = meaningfulStderrLine(result.stderr);
  const context = { role: result.role, stage: result.stage, detail: result.stderr };
  if (result.timedOut) {
    const flag = limitFlag(result.timedOut);
    return new MachineFaultError(
      `the reference process (which never imports the candidate) ran past its limit of ${formatSeconds(result.timeLimitMs ?? 0)}${during} and was killed; no verdict`,
      {
        ...context,
        resource: 'reference-process',
        hint: `the problem is too slow at these sizes on this machine, or the machine is loaded: raise ${flag}, or evaluate at smaller sizes (--set NAME=VALUE)`,
      },
    );
  }
  if (result.signal) {
    const killed = result.signal === 'SIGKILL';
    return new MachineFaultError(`the reference process (which never imports the candidate) died${during} of ${describeSignal(result.signal)}; no verdict`, {
      ...context,
      resource: killed ? 'host-memory' : 'reference-process',
      hint: killed
        ? 'SIGKILL is what the kernel sends when the host runs out of memory: evaluate fewer candidates at once or at smaller sizes (--set NAME=VALUE), then try again'
        : 'the reference or PyTorch crashed outside the candidate: try again, and report it with the problem file if it repeats',
    });
  }
  if (saysOutOfMemory(result.stderr)) {
    return new MachineFaultError(`the reference process (which never imports the candidate) ran out of memory${during}${said ? `: ${said}` : ''}; no verdict`, {
      ...context,
      resource: 'host-memory',
      hint: 'evaluate fewer candidates at once or at smaller sizes (--set NAME=VALUE), then try again',
    });
  }
  const how = result.protocolError
    ? `broke the worker protocol (${result.protocolError.message})`
    : result.exitCode !== 0
      ? `exited with status ${result.exitCode}${during}`
      : `exited${during} before sending \`${expected}\``;
  return new WorkerFaultError(`the reference worker ${how}${said ? `: ${said}` : ''}; this is a fault of kforge, not of the candidate`, {
    role: result.role,
    stage: result.stage,
    stderr: result.stderr,
  });
}

function setupError(result: WorkerProcessResult): EvaluatorSetupError | MachineFaultError {
  const hint = 'run `kforge doctor` to check Python, PyTorch and the worker package (set KFORGE_PYTHON to choose the Python)';
  if (!result.spawnError && !result.timedOut && saysOutOfMemory(result.stderr)) {
    return new MachineFaultError(
      `the ${result.role} worker could not start: it ran out of memory before saying hello (${meaningfulStderrLine(result.stderr) ?? 'out of memory'})`,
      {
        resource: 'worker-start',
        role: result.role,
        hint: 'other processes hold the device or host memory: wait for them (kforge waits for room in its host-wide budget by itself, docs/sizes.md) or evaluate fewer candidates at once',
        detail: result.stderr,
      },
    );
  }
  if (result.spawnError) {
    return new EvaluatorSetupError(`could not start the ${result.role} worker: ${result.spawnError.message}`, { hint, cause: result.spawnError });
  }
  if (result.timedOut) {
    return new EvaluatorSetupError(
      `the ${result.role} worker did not say hello within ${formatSeconds(result.timeLimitMs ?? 0)} (importing torch can be slow on a busy machine: raise --timeout-startup)`,
      { hint, stderr: result.stderr },
    );
  }
  const lastLine = meaningfulStderrLine(result.stderr);
  const how = result.signal ? `died of ${result.signal}` : `exited with status ${result.exitCode}`;
  const why = result.protocolError ? `broke the protocol (${result.protocolError.message})` : `${how} before saying hello`;
  return new EvaluatorSetupError(`the ${result.role} worker ${why}${lastLine ? `: ${lastLine}` : ''}`, { hint, stderr: result.stderr });
}

/** The last non-empty line of a process's stderr, shortened. */
export function lastStderrLine(stderr: string): string | null {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const last = lines[lines.length - 1];
  if (last === undefined) return null;
  return last.length > 300 ? `${last.slice(0, 300)}…` : last;
}

function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
