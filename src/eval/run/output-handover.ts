import { lstat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { JudgedTrial, JudgementMessage, KeptMessage } from '../process/protocol.js';
import type { Step } from './outcome.js';

/** An output the judge is asked about: a saved file and the seeds (and sizes) it was computed from. */
export type JudgedOutput = KeptMessage['outputs'][number];

export type JudgeStep = Step<JudgementMessage>;

export interface OutputHandoverOptions {
  /** The candidate's output folder: only files directly in it are deleted once judged. */
  outputDirectory: string;
  /** Sends one `judge` request to the reference role and reads its judgement. */
  judge: (outputs: JudgedOutput[]) => Promise<JudgeStep>;
  /** Leave judged files in place (`KFORGE_KEEP_SCRATCH=1`). */
  keepFiles?: boolean;
}

/**
 * The candidate's saved outputs, judged when they are handed over and deleted once judged, so that an
 * evaluation at KernelBench's sizes holds about one allowance of outputs on the scratch disk rather
 * than a dozen gigabyte files (docs/worker-protocol.md, `kept`). The messages that list outputs
 * later (`correctness-outputs`, `batch-outputs`, `timing`) list the handed-over ones again; their
 * judgement is reused, never asked for twice, and the combined judgement keeps the listed order.
 *
 * @example
 * const handover = new OutputHandover({ outputDirectory: scratch.outputDirectory, judge: (outputs) => run.judge(outputs) });
 * await handover.accept(keptMessage);               // judged now, files deleted
 * const judged = await handover.judgement(listed);  // early trials reused, the rest judged
 */
export class OutputHandover {
  readonly #options: OutputHandoverOptions;
  readonly #early = new Map<string, { trial: JudgedTrial; degenerate: boolean }>();
  #earlyMs = 0;

  constructor(options: OutputHandoverOptions) {
    this.#options = options;
  }

  /** Milliseconds spent judging handed-over outputs (the timing budget does not count them). */
  get earlyJudgingMs(): number {
    return this.#earlyMs;
  }

  /** Judges the outputs of a `kept` message now and deletes their files; the failed step when the judge failed, else null. */
  async accept(message: KeptMessage): Promise<Extract<JudgeStep, { ok: false }> | null> {
    const startedMs = performance.now();
    const judged = await this.#judgeAndDelete(message.outputs).finally(() => {
      this.#earlyMs += performance.now() - startedMs;
    });
    if (!judged.ok) return judged;
    message.outputs.forEach((output, index) => {
      this.#early.set(keyOf(output), { trial: judged.value.trials[index]!, degenerate: judged.value.degenerate ?? false });
    });
    return null;
  }

  /** The judgement of `outputs` in their order: those handed over earlier reused, the others judged now (and deleted). */
  async judgement(outputs: JudgedOutput[]): Promise<JudgeStep> {
    const rest = outputs.filter((output) => !this.#early.has(keyOf(output)));
    let judgedRest: JudgementMessage | null = null;
    if (rest.length > 0) {
      const judged = await this.#judgeAndDelete(rest);
      if (!judged.ok) return judged;
      judgedRest = judged.value;
    }
    let next = 0;
    let degenerate = judgedRest?.degenerate ?? false;
    const trials = outputs.map((output) => {
      const early = this.#early.get(keyOf(output));
      if (early) {
        degenerate ||= early.degenerate;
        return early.trial;
      }
      return judgedRest!.trials[next++]!;
    });
    const passed = trials.length > 0 && trials.every((trial) => trial.passed);
    return { ok: true, value: { v: 1, type: 'judgement', passed, degenerate, trials } };
  }

  async #judgeAndDelete(outputs: JudgedOutput[]): Promise<JudgeStep> {
    const judged = await this.#options.judge(outputs);
    if (judged.ok && !this.#options.keepFiles) await Promise.all(outputs.map((output) => this.#delete(output.path)));
    return judged;
  }

  /** Deletes a judged file when it lies directly in the output folder (a path the candidate named elsewhere is left alone). */
  async #delete(file: string): Promise<void> {
    const folder = path.resolve(this.#options.outputDirectory);
    if (path.dirname(path.resolve(folder, file)) !== folder) return;
    const stats = await lstat(folder).catch(() => null);
    if (!stats?.isDirectory()) return;
    await unlink(path.resolve(folder, file)).catch(() => undefined);
  }
}

/** One saved output's identity: its file and what it was computed from. */
function keyOf(output: JudgedOutput): string {
  return JSON.stringify([output.path, output.seed, output.input_seed ?? output.seed, output.input_digest ?? null, output.variant ?? null]);
}
