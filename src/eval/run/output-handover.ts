import type { HandedOutput, JudgedTrial, MessageOfType } from '../process/protocol.js';
import type { Step } from './outcome.js';

/** An output listed by a later message (`correctness-outputs`, `batch-outputs`, `timing`): its hand-over id and seeds. */
export interface ListedOutput {
  id: string;
  seed: number;
  input_seed?: number | undefined;
}

export type JudgeStep = Step<MessageOfType<'judgement'>>;
export type HandoverReceived = MessageOfType<'handover-received'>;

/** What the judge answered about one handed-over output. */
export interface HandoverJudged {
  step: JudgeStep;
  /** The judge's `handover-received` (null when it took no bytes: a header it refused). */
  received: HandoverReceived | null;
  /** When `handover-received` arrived, by the parent's clock (`clockMs`); null without one. */
  receivedAtMs?: number | null;
}

/**
 * How long the judge may take to hold its copy of an output once it starts taking it, by its own
 * clock (`receive_ms`, which the candidate's process does not own): a fixed allowance plus the
 * bytes at a floor rate far below any transport's (docs/worker-protocol.md, "The output hand-over").
 * Work the candidate does in that window is the only work after its call that can still reach what
 * is judged; past the bound the output is the candidate's `handover-window` rejection.
 */
export const HANDOVER_WINDOW = { fixedMs: 2000, floorBytesPerMs: 100_000 } as const;

export function handoverWindowBoundMs(bytes: number): number {
  return HANDOVER_WINDOW.fixedMs + bytes / HANDOVER_WINDOW.floorBytesPerMs;
}

export interface OutputHandoverOptions {
  /**
   * Sends one `judge` request for a handed-over output to the reference role and reads its answer;
   * `onReady` runs when the judge asks for the output (its descriptor, or its bytes on the pipe):
   * the parent then lets the candidate send it.
   */
  judge: (output: HandedOutput, onReady: (transport?: 'descriptor') => void) => Promise<HandoverJudged>;
  /** Writes one line to the candidate worker (`handover-send`, `handover-done`). */
  tellCandidate: (message: { v: 1; type: 'handover-send' | 'handover-done'; transport?: 'descriptor' }) => void;
  /** The parent's monotonic clock in ms (default `performance.now`). */
  clockMs?: () => number;
}

/** The figures of the hand-overs of one evaluation (the guard report's `handover` check). */
export interface HandoverFigures {
  outputs: number;
  bytes: number;
  /** Longest window by the judge's clock, ms, and the bytes of that output. */
  longestReceiveMs: number;
  longestBytes: number;
  /** Longest time from the parent's receipt of `handover` to that of `handover-received`, by the parent's clock, ms. */
  longestWindowMs: number;
  transports: string[];
  /** Why IPC was not used, where the judge said so (first seen). */
  ipcError: string | null;
}

/**
 * The candidate's outputs, each judged the moment it is handed over (docs/worker-protocol.md, "The
 * output hand-over"): the worker waits between `handover` and `handover-done`, and by then the judge
 * holds its own copy, so nothing the candidate does afterwards can change what is judged. The
 * messages that list outputs later (`correctness-outputs`, `batch-outputs`, `timing`) name them by
 * id; their judgement is the one given at the hand-over, and a listed output that was never handed
 * over is `missing-output`.
 *
 * @example
 * const handover = new OutputHandover({ judge, tellCandidate: (line) => candidate.send(line) });
 * await handover.accept(handoverMessage);          // judged now; the candidate goes on
 * const judged = handover.judgement(listed);       // the listed outputs' trials, in order
 */
export class OutputHandover {
  readonly #options: OutputHandoverOptions;
  readonly #judged = new Map<string, { trial: JudgedTrial; degenerate: boolean }>();
  #judgingMs = 0;
  readonly #figures: HandoverFigures = { outputs: 0, bytes: 0, longestReceiveMs: 0, longestBytes: 0, longestWindowMs: 0, transports: [], ipcError: null };

  constructor(options: OutputHandoverOptions) {
    this.#options = options;
  }

  /** Milliseconds spent taking and judging handed-over outputs (the timing budget does not count them). */
  get earlyJudgingMs(): number {
    return this.#judgingMs;
  }

  get figures(): HandoverFigures {
    return { ...this.#figures, transports: [...this.#figures.transports] };
  }

  /** Has the judge take and judge one output, then lets the candidate go on; the failed step when the judge failed, else null. */
  async accept(message: MessageOfType<'handover'>): Promise<Extract<JudgeStep, { ok: false }> | null> {
    const output = message.output;
    if (this.#judged.has(output.id))
      return {
        ok: false,
        outcome: { verdict: 'rejected', reasons: [{ check: 'timing-tampered', message: `the candidate's process handed over output ${output.id} twice` }] },
      };
    const clock = this.#options.clockMs ?? (() => performance.now());
    const startedMs = clock();
    let answered: HandoverJudged;
    try {
      answered = await this.#options.judge(output, (transport) =>
        this.#options.tellCandidate(transport ? { v: 1, type: 'handover-send', transport } : { v: 1, type: 'handover-send' }),
      );
    } finally {
      this.#judgingMs += clock() - startedMs;
    }
    if (!answered.step.ok) return answered.step;
    const judgement = answered.step.value;
    let trial = judgement.trials[0]!;
    if (answered.received) {
      if (answered.receivedAtMs != null) this.#figures.longestWindowMs = Math.max(this.#figures.longestWindowMs, answered.receivedAtMs - startedMs);
      trial = this.#windowed(trial, answered.received, output.id);
    }
    this.#judged.set(output.id, { trial, degenerate: judgement.degenerate ?? false });
    this.#options.tellCandidate({ v: 1, type: 'handover-done' });
    return null;
  }

  /** The judgement of the listed outputs in their order, from their hand-overs. */
  judgement(outputs: readonly ListedOutput[]): JudgeStep {
    let degenerate = false;
    const trials = outputs.map((output): JudgedTrial => {
      const judged = this.#judged.get(output.id);
      if (judged) {
        degenerate ||= judged.degenerate;
        return judged.trial;
      }
      return {
        seed: output.seed,
        input_seed: output.input_seed ?? null,
        passed: false,
        check: 'missing-output',
        message: `output ${output.id} was listed but never handed over to the judge`,
        max_abs_error: null,
        max_rel_error: null,
        fp64_max_abs_error: null,
        fp64_max_rel_error: null,
      };
    });
    const passed = trials.length > 0 && trials.every((trial) => trial.passed);
    return { ok: true, value: { v: 1, type: 'judgement', passed, degenerate, trials } };
  }

  /**
   * The judgement of every output handed over so far whose id starts with `prefix`, in the order
   * they were handed over; null when there is none (an evaluation that ended before its first).
   */
  judgedSoFar(prefix: string): MessageOfType<'judgement'> | null {
    const judged = [...this.#judged.entries()].filter(([id]) => id.startsWith(prefix)).map(([, entry]) => entry);
    if (judged.length === 0) return null;
    const trials = judged.map((entry) => entry.trial);
    return { v: 1, type: 'judgement', passed: trials.every((trial) => trial.passed), degenerate: judged.some((entry) => entry.degenerate), trials };
  }

  /** The trial, or a `handover-window` failure when the judge took longer than the bound to hold its copy. */
  #windowed(trial: JudgedTrial, received: HandoverReceived, id: string): JudgedTrial {
    const figures = this.#figures;
    figures.outputs += 1;
    figures.bytes += received.bytes;
    if (!figures.transports.includes(received.transport)) figures.transports.push(received.transport);
    figures.ipcError ??= received.ipc_error ?? null;
    if (received.receive_ms >= figures.longestReceiveMs) {
      figures.longestReceiveMs = received.receive_ms;
      figures.longestBytes = received.bytes;
    }
    const boundMs = handoverWindowBoundMs(received.bytes);
    if (received.receive_ms <= boundMs) return trial;
    return {
      ...trial,
      passed: false,
      check: 'handover-window',
      message: `output ${id} took ${received.receive_ms.toFixed(0)} ms to reach the judge (${received.bytes} bytes, by ${received.transport}), over the bound of ${boundMs.toFixed(0)} ms: work after a call returns is the candidate's, and its output must leave at once`,
    };
  }
}
