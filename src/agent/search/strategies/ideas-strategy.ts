import type { Attempt, EvaluatedAttempt, IdeaRef, Lineage } from '../state/attempt.js';
import { runPool } from './attempt-pool.js';
import { bestAttempt, fastestCorrect, speedupOf } from '../selection/candidate-ranking.js';
import { parseIdeas, type ProposedIdea } from '../prompts/idea-parser.js';
import { formatSpeedup } from '../../../core/number-format.js';
import type { ProblemSession, SessionIdea } from './problem-session.js';
import { buildIdeasPrompt, buildKernelPrompt, type KernelTask } from '../prompts/prompt-builder.js';
import type { SearchStrategy } from './search-strategy.js';

export interface IdeasStrategyOptions {
  /** Rounds in all. Default 5 (Stanford's setting). */
  rounds?: number;
  /** Ideas proposed per round (k). Default 3. */
  ideasPerRound?: number;
  /** Implementations per idea (m). Default 2. */
  implementationsPerIdea?: number;
  /** Fastest correct candidates that seed the next round's implementations. Default 2. */
  seeds?: number;
  /** Earlier good kernels shown when ideas are proposed. Default 2. */
  bankSize?: number;
  /** Fix turns a failed implementation gets, with the evaluator's findings. Default 1. */
  fixTurns?: number;
  /** Implementations asked for at once. Default 4. */
  width?: number;
  temperature?: number;
}

interface WorkItem {
  idea: IdeaRef;
  seed: EvaluatedAttempt | null;
}

/** The idea a model falls back on when its ideas reply could not be read. */
const FALLBACK_IDEA: ProposedIdea = {
  label: 'general-speedup',
  text: 'Make the fastest correct kernel faster in whatever way the evaluator feedback suggests (memory access, parallelism, vectorisation).',
};

/** The round after every round in the history (0 for an empty history). */
function nextRound(history: readonly Attempt[]): number {
  return history.reduce((latest, attempt) => Math.max(latest, attempt.lineage.round + 1), 0);
}

/** Whether an attempt is a fix of another attempt of the same idea and round. */
function isFix(attempt: Attempt, history: readonly Attempt[]): boolean {
  const parent = attempt.lineage.parentCandidateId;
  if (parent === null) return false;
  return history.some(
    (other) =>
      other.kind === 'evaluated' &&
      other.candidate.id === parent &&
      other.lineage.round === attempt.lineage.round &&
      other.lineage.idea?.id === attempt.lineage.idea?.id,
  );
}

/** How an idea did: one line for the next ideas prompt. */
export function describeIdeaOutcome(idea: SessionIdea, history: readonly Attempt[]): string {
  const tried = history.filter((attempt) => attempt.lineage.idea?.id === idea.id);
  const best = bestAttempt(tried);
  const outcome = !best
    ? 'no candidate was evaluated'
    : best.result.verdict === 'correct'
      ? `best ${formatSpeedup(speedupOf(best.result, 'eager'))} vs eager (${tried.filter((attempt) => attempt.kind === 'evaluated' && attempt.result.verdict === 'correct').length} of ${tried.length} correct)`
      : `no correct implementation (furthest: ${best.result.verdict})`;
  return `round ${idea.round}, "${idea.label}": ${idea.text} — ${outcome}`;
}

/**
 * Stanford's method: each round the model proposes k optimisation ideas in plain language,
 * conditioned on the ideas already tried and how they did; each idea becomes m implementations,
 * started from the fastest correct candidates so far; those seed the next round, and a bank of
 * earlier good kernels is shown when ideas are proposed. A person may pin an idea (implemented
 * again in later rounds) or drop it (never implemented again).
 */
export class IdeasStrategy implements SearchStrategy {
  readonly name = 'ideas' as const;

  constructor(private readonly options: IdeasStrategyOptions = {}) {}

  async run(session: ProblemSession, signal: AbortSignal): Promise<void> {
    const rounds = this.options.rounds ?? 5;
    const known = await session.ideas();
    const knownRounds = new Set(known.map((idea) => idea.round));
    // A resumed run continues its latest ideas round; a fresh start (or a switch from another
    // strategy) opens the round after everything already in the history.
    let round = known.length > 0 ? Math.max(...knownRounds) : nextRound(session.history);
    for (let done = Math.max(0, knownRounds.size - 1); done < rounds; done += 1, round += 1) {
      if (signal.aborted || session.stopReason() !== null) return;
      const ideas = await this.ideasFor(session, round);
      if (ideas === null) return;
      await this.implement(session, round, ideas, signal);
    }
  }

  /** The ideas of a round: stored ones (a resumed round) or newly proposed, plus pinned earlier ones. */
  private async ideasFor(session: ProblemSession, round: number): Promise<SessionIdea[] | null> {
    const all = await session.ideas();
    let current = all.filter((idea) => idea.round === round);
    if (current.length === 0) {
      await session.recordEvent('round-started', { round });
      const count = this.options.ideasPerRound ?? 3;
      const text = await session.ask(
        buildIdeasPrompt({
          problem: session.prompt,
          count,
          triedIdeas: all.map((idea) => describeIdeaOutcome(idea, session.history)),
          bank: fastestCorrect(session.history, this.options.bankSize ?? 2).map((attempt) => session.show(attempt)),
        }),
        round,
      );
      if (text === null) return session.stopReason() === null ? [] : null;
      let proposed = parseIdeas(text, count);
      if (proposed.length === 0) {
        await session.recordEvent('ideas-unreadable', { round, replyExcerpt: text.slice(0, 500) });
        proposed = [FALLBACK_IDEA];
      }
      current = await session.addIdeas(round, proposed);
      await session.recordEvent('ideas-proposed', { round, ideaIds: current.map((idea) => idea.id), labels: current.map((idea) => idea.label) });
    }
    const pinned = all.filter((idea) => idea.round < round && idea.status === 'pinned');
    return [...current, ...pinned].filter((idea) => idea.status !== 'dropped');
  }

  private async implement(session: ProblemSession, round: number, ideas: readonly SessionIdea[], signal: AbortSignal): Promise<void> {
    const seeds = fastestCorrect(
      session.history.filter((attempt) => attempt.lineage.round < round),
      this.options.seeds ?? 2,
    );
    const perIdea = this.options.implementationsPerIdea ?? 2;
    const queue: WorkItem[] = [];
    for (const idea of ideas) {
      const done = session.history.filter(
        (attempt) =>
          attempt.lineage.round === round && attempt.lineage.idea?.id === idea.id && attempt.kind !== 'model-failed' && !isFix(attempt, session.history),
      ).length;
      for (let index = done; index < perIdea; index += 1) {
        queue.push({ idea: { id: idea.id, label: idea.label, text: idea.text }, seed: seeds.length > 0 ? seeds[index % seeds.length]! : null });
      }
    }
    await runPool(
      this.options.width ?? 4,
      () => (signal.aborted || session.stopReason() !== null ? null : (queue.shift() ?? null)),
      (item) => this.implementOne(session, round, item),
    );
  }

  private async implementOne(session: ProblemSession, round: number, item: WorkItem): Promise<void> {
    let task: KernelTask = { kind: 'implement-idea', idea: item.idea.text, seed: item.seed ? session.show(item.seed) : null };
    let lineage: Lineage = { round, parentCandidateId: item.seed?.candidate.id ?? null, idea: item.idea };
    for (let turn = 0; turn <= (this.options.fixTurns ?? 1); turn += 1) {
      // A person may drop the idea while its round runs: no further implementation or fix of it starts.
      if ((await session.ideas()).some((idea) => idea.id === item.idea.id && idea.status === 'dropped')) return;
      const attempt = await session.attempt({
        messages: buildKernelPrompt({ problem: session.prompt, task }),
        lineage,
        ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      });
      if (attempt === null || attempt.kind === 'model-failed') return;
      if (attempt.kind === 'evaluated' && attempt.result.verdict === 'correct') return;
      if (attempt.kind === 'no-code') {
        task = { kind: 'reply-without-code', reason: attempt.reason, parent: item.seed ? session.show(item.seed) : null };
      } else {
        task = { kind: 'refine', parent: session.show(attempt), goal: 'fix' };
        lineage = { ...lineage, parentCandidateId: attempt.candidate.id };
      }
    }
  }
}
