/**
 * Longer than convention 4's 300 lines: `WorkerProcess` is one child's state machine: its stage and
 * idle clocks, its capped output, its messages and its termination share private state that each
 * event (a line, a stage, a timeout, an exit, a cancel) changes together.
 */
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { execa, type ResultPromise } from 'execa';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT_BYTES } from './capped-output.js';
import { signalProcessGroup, trackProcessGroup, untrackProcessGroup } from './process-group.js';
import { parseWorkerMessage, type Stage, type StageMemory, type MessageOfType } from './protocol.js';
import { workerRequestSchema, type WorkerRequest } from './worker-requests.js';
import { ProtocolError } from './protocol-error.js';
import { ProtocolLineReader } from './protocol-line-reader.js';
import { MessageOrder } from './message-order.js';
import { StageClock } from './stage-clock.js';
import type { WorkerRole } from '../worker-role.js';
import type { WorkerAssignment, WorkerEvent, WorkerProcessOptions, WorkerProcessResult } from './worker-process-types.js';

/** How long a worker gets between SIGTERM and SIGKILL, in milliseconds. */
export const DEFAULT_TERMINATION_GRACE_MS = 2000;
/** How long a worker may take to exit once kforge has what it needs from it (`finish`), in milliseconds. */
export const EXIT_WINDOW_MS = 5000;

type WorkerSubprocess = ResultPromise<{
  cwd: string;
  env: Record<string, string>;
  extendEnv: false;
  detached: true;
  stdio: ['pipe', 'pipe', 'pipe', 'pipe'];
  buffer: false;
  reject: false;
  stripFinalNewline: false;
}>;

/** How long the pipes may stay open after the worker's group was killed, in milliseconds. */
const PIPE_DRAIN_MS = 2000;

/**
 * One worker process: spawned detached (its own process group) with fd 3 as the protocol channel,
 * stage time limits, bounded output capture, and its whole group killed when it ends.
 *
 * @example
 * const worker = WorkerProcess.start({ role: 'candidate', command: 'python3', args, cwd, environment,
 *   stageLimitsMs: { build: 600_000 }, idleLimitMs: 120_000 });
 * const event = await worker.next();
 */
export class WorkerProcess {
  readonly role: WorkerRole;
  #options: WorkerProcessOptions;
  readonly #subprocess: WorkerSubprocess;
  readonly #startedAt = performance.now();
  readonly #stdout: CappedOutput;
  readonly #stderr: CappedOutput;
  readonly #reader: ProtocolLineReader;
  readonly #queue: WorkerEvent[] = [];
  readonly #waiters: Array<(event: WorkerEvent) => void> = [];
  readonly #stageDurationsMs: Partial<Record<Stage, number>> = {};
  readonly #stageMemory: Partial<Record<Stage, StageMemory>> = {};
  readonly #result: Promise<WorkerProcessResult>;
  readonly #order: MessageOrder;
  #waiting = 0;
  readonly #stageClock = new StageClock({ onExpire: (limitMs) => this.#expire(this.#order.activeStage ?? 'idle', limitMs) });
  #idleTimer: NodeJS.Timeout | undefined;
  #killTimer: NodeJS.Timeout | undefined;
  #exited = false;
  #timedOut: WorkerProcessResult['timedOut'] = null;
  #timeLimitMs: number | null = null;
  #cancelled = false;
  #protocolError: ProtocolError | null = null;
  #exitEvent: WorkerEvent | undefined;
  readonly #hello: Promise<MessageOfType<'hello'> | null>;
  #resolveHello: (hello: MessageOfType<'hello'> | null) => void = () => undefined;
  readonly #cancelListeners: Array<() => void> = [];

  private constructor(options: WorkerProcessOptions) {
    this.role = options.role;
    this.#options = options;
    this.#order = new MessageOrder(options.role);
    this.#hello = new Promise((resolve) => (this.#resolveHello = resolve));
    this.#stdout = new CappedOutput(options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES);
    this.#stderr = new CappedOutput(options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES);
    this.#reader = new ProtocolLineReader({
      maxLineBytes: options.maxLineBytes,
      onLine: (line) => this.#onLine(line),
      onOverflow: (length) => this.fail(new ProtocolError(`an fd-3 line grew past the limit (${length} bytes without a newline)`, { role: this.role })),
    });
    this.#subprocess = execa(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.environment,
      extendEnv: false,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      buffer: false,
      reject: false,
      stripFinalNewline: false,
    });
    this.#result = this.#watch();
  }

  /** Spawns a worker. Never throws for a failed spawn: the result carries `spawnError`. */
  static start(options: WorkerProcessOptions): WorkerProcess {
    return new WorkerProcess(options);
  }

  /** The worker's pid, which is also its process group id. */
  get pid(): number | undefined {
    return this.#subprocess.pid;
  }

  /**
   * The worker's `hello`, once it arrived (it stays queued for {@link next}), or null when the
   * worker ended without one. Lets a pool wait for readiness without consuming the message.
   */
  get hello(): Promise<MessageOfType<'hello'> | null> {
    return this.#hello;
  }

  /** Whether the worker's process has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /**
   * Hands a started (warm) worker to an evaluation: from now on the stage limits, idle limit,
   * grace period, stage callback and cancel signal of `assignment` apply. Limits already running
   * keep their old length; the cancel signal the worker was started with stays in force too.
   */
  adopt(assignment: WorkerAssignment): void {
    this.#options = { ...this.#options, ...assignment };
    if (assignment.cancelSignal) this.#listenForCancel(assignment.cancelSignal);
  }

  /**
   * New limits for this worker's stages, ms (those not named keep theirs). A stage that is running
   * ends at its new limit, counted from its start (at once when that has passed).
   */
  setStageLimits(limitsMs: Partial<Record<Stage, number>>): void {
    this.#options = { ...this.#options, stageLimitsMs: { ...this.#options.stageLimitsMs, ...limitsMs } };
    const running = this.#order.activeStage;
    const limitMs = running === null ? undefined : limitsMs[running];
    if (limitMs !== undefined) this.#stageClock.setLimit(limitMs);
  }

  /**
   * Stops counting the running stage's time against its limit while kforge works for the worker
   * (the judge taking and judging an output the worker handed over and waits on), until
   * {@link resumeStageClock}; it goes on counting where it stopped.
   */
  pauseStageClock(): void {
    this.#stageClock.pause();
  }

  /** Counts the running stage's time again after {@link pauseStageClock}. */
  resumeStageClock(): void {
    this.#stageClock.resume();
  }

  /** The result, available once the worker has exited and its group was killed. */
  get result(): Promise<WorkerProcessResult> {
    return this.#result;
  }

  /** Writes one request line to the worker's stdin. Writes after the exit are dropped. */
  send(request: WorkerRequest): void {
    const line = `${JSON.stringify(workerRequestSchema.parse(request))}\n`;
    const stdin = this.#subprocess.stdin;
    if (this.#exited || !stdin || stdin.destroyed || stdin.writableEnded) return;
    stdin.write(line);
  }

  /** Closes the worker's stdin (the reference role's judge loop ends on it). */
  closeInput(): void {
    const stdin = this.#subprocess.stdin;
    if (stdin && !stdin.writableEnded) stdin.end();
  }

  /** The next non-stage message, or the exit once no message is left. */
  next(): Promise<WorkerEvent> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#exitEvent) return Promise.resolve(this.#exitEvent);
    this.#waiting += 1;
    this.#updateIdleTimer();
    return new Promise((resolve) => {
      this.#waiters.push((event) => {
        this.#waiting -= 1;
        this.#updateIdleTimer();
        resolve(event);
      });
    });
  }

  /**
   * Closes stdin and waits for the worker to exit; after `withinMs` (default: the idle limit) its
   * group is killed. The caller already has what it needed, so this is not a time-out.
   */
  async finish(withinMs: number = this.#options.idleLimitMs): Promise<WorkerProcessResult> {
    this.closeInput();
    const timer = setTimeout(() => this.#kill('SIGKILL'), withinMs);
    try {
      return await this.#result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records a protocol violation found by the caller and kills the worker's group at once. */
  fail(error: ProtocolError): void {
    if (this.#protocolError || this.#exitEvent) return;
    this.#protocolError = error;
    this.#reader.stop();
    this.#queue.length = 0;
    this.#kill('SIGKILL');
  }

  async #watch(): Promise<WorkerProcessResult> {
    const subprocess = this.#subprocess;
    const stdio: ReadonlyArray<Readable | Writable | null> = subprocess.stdio;
    subprocess.stdout?.on('data', (chunk: Buffer) => this.#stdout.append(chunk));
    subprocess.stderr?.on('data', (chunk: Buffer) => this.#stderr.append(chunk));
    (stdio[3] as Readable | null)?.on('data', (chunk: Buffer) => this.#reader.push(chunk));
    subprocess.stdin?.on('error', () => undefined);
    const groupId = subprocess.pid;
    if (groupId !== undefined) trackProcessGroup(groupId);
    if (this.#options.cancelSignal) this.#listenForCancel(this.#options.cancelSignal);

    const exited = new Promise<void>((resolve) => subprocess.once('exit', () => resolve()));
    const settled = subprocess.then((value) => value);
    await Promise.race([exited, settled]);
    const durationMs = performance.now() - this.#startedAt;
    this.#exited = true;
    this.#clearTimers();
    for (const remove of this.#cancelListeners.splice(0)) remove();
    if (groupId !== undefined) {
      signalProcessGroup(groupId, 'SIGKILL');
      untrackProcessGroup(groupId);
    }
    const drained = await Promise.race([settled.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), PIPE_DRAIN_MS).unref())]);
    if (!drained) for (const stream of stdio) stream?.destroy();
    const final = await settled;
    this.#reader.end();
    const failure = final as { code?: string; originalMessage?: string; cause?: unknown };
    const spawnError =
      groupId === undefined ? new Error(failure.originalMessage ?? `could not start ${this.#options.command}`, { cause: failure.cause }) : null;
    const result: WorkerProcessResult = {
      role: this.role,
      pid: groupId,
      exitCode: final.exitCode ?? null,
      signal: (final.signal as NodeJS.Signals | undefined) ?? null,
      timedOut: this.#timedOut,
      timeLimitMs: this.#timeLimitMs,
      stage: this.#order.activeStage,
      cancelled: this.#cancelled,
      protocolError: this.#protocolError,
      spawnError,
      durationMs,
      stdout: this.#stdout.text(),
      stderr: this.#stderr.text(),
      droppedBytes: { stdout: this.#stdout.droppedBytes, stderr: this.#stderr.droppedBytes },
      stageDurationsMs: { ...this.#stageDurationsMs },
      stageMemory: { ...this.#stageMemory },
    };
    this.#exitEvent = { type: 'exit', result };
    this.#resolveHello(null);
    this.#deliver(this.#exitEvent);
    return result;
  }

  #onLine(line: string): void {
    if (this.#protocolError || this.#timedOut || this.#cancelled) return;
    const parsed = parseWorkerMessage(line, this.role);
    if (!parsed.ok) {
      this.fail(parsed.error);
      return;
    }
    const message = parsed.message;
    const violation = this.#order.accept(message);
    if (violation) {
      this.fail(new ProtocolError(violation, { role: this.role, line: line.slice(0, 120) }));
      return;
    }
    if (message.type === 'stage') {
      this.#onStage(message);
      return;
    }
    if (message.type === 'failure') this.#stopStageTimer();
    if (message.type === 'hello') this.#resolveHello(message);
    this.#deliver({ type: 'message', message });
  }

  #listenForCancel(signal: AbortSignal): void {
    const onAbort = (): void => {
      if (this.#exited) return;
      this.#cancelled = true;
      this.#queue.length = 0;
      this.#terminate();
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    this.#cancelListeners.push(() => signal.removeEventListener('abort', onAbort));
  }

  #onStage(message: MessageOfType<'stage'>): void {
    if (message.status === 'start') {
      const limitMs = this.#options.stageLimitsMs[message.stage];
      if (limitMs !== undefined) this.#stageClock.start(limitMs);
    } else {
      this.#stopStageTimer();
      const previous = this.#stageDurationsMs[message.stage] ?? 0;
      this.#stageDurationsMs[message.stage] = previous + (message.duration_ms ?? 0);
      if (message.memory) this.#stageMemory[message.stage] = largerPeaks(this.#stageMemory[message.stage], message.memory);
    }
    this.#updateIdleTimer();
    this.#options.onStage?.(message);
  }

  /** A failed stage never ends: its limit stops with the `failure` message (the stage stays named). */
  #stopStageTimer(): void {
    this.#stageClock.stop();
  }

  #updateIdleTimer(): void {
    const shouldRun = !this.#exited && this.#order.activeStage === null && this.#waiting > 0;
    if (!shouldRun) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
      return;
    }
    if (this.#idleTimer) return;
    const limitMs = this.#options.idleLimitMs;
    this.#idleTimer = setTimeout(() => this.#expire(this.#order.helloSeen ? 'idle' : 'startup', limitMs), limitMs);
  }

  #expire(what: NonNullable<WorkerProcessResult['timedOut']>, limitMs: number): void {
    if (this.#exited || this.#timedOut) return;
    this.#timedOut = what;
    this.#timeLimitMs = limitMs;
    this.#queue.length = 0;
    this.#terminate();
  }

  /** SIGTERM to the group, then SIGKILL after the grace period. */
  #terminate(): void {
    if (this.#exited || this.#killTimer) return;
    this.#kill('SIGTERM');
    const graceMs = this.#options.terminationGraceMs ?? DEFAULT_TERMINATION_GRACE_MS;
    this.#killTimer = setTimeout(() => this.#kill('SIGKILL'), graceMs);
  }

  #kill(signal: NodeJS.Signals): void {
    const groupId = this.#subprocess.pid;
    if (groupId === undefined || this.#exited) return;
    signalProcessGroup(groupId, signal);
  }

  #clearTimers(): void {
    this.#stageClock.stop();
    clearTimeout(this.#idleTimer);
    clearTimeout(this.#killTimer);
  }

  #deliver(event: WorkerEvent): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(event);
    else if (event.type === 'message') this.#queue.push(event);
    if (event.type === 'exit') for (const next of this.#waiters.splice(0)) next(event);
  }
}

/** The larger of two peaks, field by field (null where neither is known). */
function largerPeaks(previous: StageMemory | undefined, next: StageMemory): StageMemory {
  const larger = (a: number | null | undefined, b: number | null): number | null => (a == null ? b : b == null ? a : Math.max(a, b));
  return {
    device_peak_bytes: larger(previous?.device_peak_bytes, next.device_peak_bytes),
    device_allocated_peak_bytes: larger(previous?.device_allocated_peak_bytes, next.device_allocated_peak_bytes ?? null),
    host_peak_bytes: larger(previous?.host_peak_bytes, next.host_peak_bytes),
  };
}
