import { runPool } from './attempt-pool.js';
import type { ProblemSession } from './problem-session.js';
import { buildKernelPrompt } from '../prompts/prompt-builder.js';
import type { SearchStrategy } from './search-strategy.js';

export interface SampleStrategyOptions {
  /** Independent candidates in all; without it, sampling goes on until the budget ends. */
  samples?: number;
  /** Candidates asked for at once (the provider's own limit applies on top). Default 4. */
  width?: number;
  temperature?: number;
}

/**
 * Best-of-n: n independent candidates from the same prompt, asked for in parallel, the best kept.
 * No candidate sees another. A resumed run asks only for the ones still missing.
 */
export class SampleStrategy implements SearchStrategy {
  readonly name = 'sample' as const;

  constructor(private readonly options: SampleStrategyOptions = {}) {}

  async run(session: ProblemSession, signal: AbortSignal): Promise<void> {
    const total = this.options.samples ?? Infinity;
    let started = session.history.filter((attempt) => attempt.kind !== 'model-failed').length;
    let refused = false;
    const messages = buildKernelPrompt({ problem: session.prompt, task: { kind: 'write' } });
    await runPool(
      this.options.width ?? 4,
      () => {
        if (refused || signal.aborted || session.stopReason() !== null || started >= total) return null;
        started += 1;
        return started;
      },
      async () => {
        const attempt = await session.attempt({
          messages,
          lineage: { round: 0, parentCandidateId: null, idea: null },
          ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
        });
        if (attempt === null) refused = true;
        if (attempt?.kind === 'model-failed') started -= 1;
      },
    );
  }
}
