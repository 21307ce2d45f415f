import type { ProtocolError } from './protocol-error.js';
import type { Stage, StageMemory, WorkerMessage, MessageOfType } from './protocol.js';
import type { WorkerRole } from '../worker-role.js';

export interface WorkerProcessOptions {
  role: WorkerRole;
  /** Executable, e.g. `python3`. */
  command: string;
  /** Arguments, e.g. `['-m', 'kforge_worker', 'candidate']`. */
  args: readonly string[];
  /** Working directory: the evaluation's scratch directory. */
  cwd: string;
  /** The whole environment of the worker (already scrubbed; nothing is inherited). */
  environment: Record<string, string>;
  /** Limit of each stage in milliseconds, started at the stage's `start` message. */
  stageLimitsMs: Partial<Record<Stage, number>>;
  /**
   * Limit in milliseconds on waiting for the worker outside any stage: for `hello`, between
   * stages, and for the exit. It runs only while the parent waits for the worker.
   */
  idleLimitMs: number;
  /** Milliseconds between SIGTERM and SIGKILL. Default 2000. */
  terminationGraceMs?: number;
  /** Bytes kept of each of stdout and stderr. Default 1 MiB. */
  outputLimitBytes?: number;
  /** Longest accepted fd-3 line in bytes. */
  maxLineBytes?: number;
  /** Aborting kills the worker's process group; the result then has `cancelled: true`. */
  cancelSignal?: AbortSignal;
  /** Called for every stage message, in order. */
  onStage?: (message: MessageOfType<'stage'>) => void;
}

/**
 * What an evaluation sets on a worker it takes over from a warm pool (see
 * {@link WorkerProcess.adopt}): the limits, the cancel signal and the stage callback of that
 * evaluation replace those the worker was started with.
 */
export type WorkerAssignment = Pick<WorkerProcessOptions, 'stageLimitsMs' | 'idleLimitMs' | 'terminationGraceMs' | 'cancelSignal' | 'onStage'>;

/** How a worker ended; the shape follows execa's result. */
export interface WorkerProcessResult {
  role: WorkerRole;
  pid: number | undefined;
  /** Exit status, or null when a signal ended it or it never started. */
  exitCode: number | null;
  /** The signal that ended the worker, e.g. `SIGSEGV`. */
  signal: NodeJS.Signals | null;
  /**
   * What ran past its limit: a stage name, `startup` (no `hello` in time) or `idle` (waiting
   * outside a stage); null when no limit expired.
   */
  timedOut: Stage | 'startup' | 'idle' | null;
  /** The limit that expired, in milliseconds. */
  timeLimitMs: number | null;
  /** The stage that was running when the worker ended (started, never ended), or null. */
  stage: Stage | null;
  /** The cancel signal was aborted. */
  cancelled: boolean;
  /** What broke the protocol, when something did (the worker was killed for it). */
  protocolError: ProtocolError | null;
  /** Why the worker could not be started at all (e.g. the executable is missing). */
  spawnError: Error | null;
  /** Milliseconds from spawn to exit. */
  durationMs: number;
  stdout: string;
  stderr: string;
  /** Bytes dropped past the output limit. */
  droppedBytes: { stdout: number; stderr: number };
  /** Stage durations the worker reported, in milliseconds (repeated stages summed). */
  stageDurationsMs: Partial<Record<Stage, number>>;
  /** The worker's memory peaks per stage, in bytes (a repeated stage keeps its largest). */
  stageMemory?: Partial<Record<Stage, StageMemory>>;
}

/** What {@link WorkerProcess.next} yields: a non-stage message, or the end of the worker. */
export type WorkerEvent = { type: 'message'; message: Exclude<WorkerMessage, MessageOfType<'stage'>> } | { type: 'exit'; result: WorkerProcessResult };
