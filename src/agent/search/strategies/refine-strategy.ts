import type { Attempt, EvaluatedAttempt, Lineage } from '../state/attempt.js';
import { fastestCorrect } from '../selection/candidate-ranking.js';
import { recentHistory } from '../prompts/history-lines.js';
import type { ProblemSession } from './problem-session.js';
import { buildKernelPrompt, type KernelTask } from '../prompts/prompt-builder.js';
import type { SearchStrategy } from './search-strategy.js';

export interface RefineStrategyOptions {
  /** Failed candidates in a row after which the next turn starts again from the best correct one. Default 3. */
  restartAfterFailures?: number;
  /** Earlier attempts listed in each prompt. Default 6. */
  historyLines?: number;
  temperature?: number;
}

/** The next turn: what to ask, and the candidate it derives from. */
export interface RefineTurn {
  task: KernelTask;
  parent: EvaluatedAttempt | null;
}

/** Failed evaluated attempts at the end of the history, in a row (replies without code skipped). */
function trailingFailures(history: readonly Attempt[]): number {
  let count = 0;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const attempt = history[index]!;
    if (attempt.kind !== 'evaluated') continue;
    if (attempt.result.verdict === 'correct') break;
    count += 1;
  }
  return count;
}

/**
 * Decides the next refine turn from the history alone: the first turn writes from scratch; after a
 * reply without code the model is told why and asked again; after a failure it fixes that
 * candidate (until `restartAfterFailures` failures in a row, then it goes back to the fastest
 * correct one); after a success it speeds up the fastest correct candidate.
 */
export function planRefineTurn(session: ProblemSession, restartAfterFailures: number): RefineTurn {
  const turns = session.history.filter((attempt) => attempt.kind !== 'model-failed');
  const last = turns.at(-1);
  const lastEvaluated = [...turns].reverse().find((attempt): attempt is EvaluatedAttempt => attempt.kind === 'evaluated') ?? null;
  const fastest = fastestCorrect(turns, 1)[0] ?? null;
  if (!last) return { task: { kind: 'write' }, parent: null };
  if (last.kind === 'no-code') {
    const parent = fastest ?? lastEvaluated;
    return { task: { kind: 'reply-without-code', reason: last.reason, parent: parent ? session.show(parent) : null }, parent };
  }
  if (last.kind === 'evaluated' && last.result.verdict !== 'correct') {
    if (fastest && trailingFailures(turns) >= restartAfterFailures) {
      return { task: { kind: 'refine', parent: session.show(fastest), goal: 'speed-up' }, parent: fastest };
    }
    return { task: { kind: 'refine', parent: session.show(last), goal: 'fix' }, parent: last };
  }
  const parent = fastest ?? last;
  return { task: { kind: 'refine', parent: session.show(parent), goal: 'speed-up' }, parent };
}

/**
 * Generate, verify, refine: one candidate per turn, each turn seeing what the evaluator found in
 * the last, until the budget ends (the loop NVIDIA ran with DeepSeek-R1 under a 15-minute budget
 * per problem). The round of a candidate is its turn number.
 */
export class RefineStrategy implements SearchStrategy {
  readonly name = 'refine' as const;

  constructor(private readonly options: RefineStrategyOptions = {}) {}

  async run(session: ProblemSession, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && session.stopReason() === null) {
      const { task, parent } = planRefineTurn(session, this.options.restartAfterFailures ?? 3);
      const lineage: Lineage = {
        round: session.history.filter((attempt) => attempt.kind !== 'model-failed').length,
        parentCandidateId: parent?.candidate.id ?? null,
        idea: null,
      };
      const messages = buildKernelPrompt({ problem: session.prompt, task, history: recentHistory(session.history, this.options.historyLines ?? 6) });
      const attempt = await session.attempt({
        messages,
        lineage,
        ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      });
      if (attempt === null) return;
    }
  }
}
