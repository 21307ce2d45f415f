import type { Action, RunStore } from '../../store/run-store.js';
import { CandidateEvaluator, candidateFilePath } from './candidate-evaluator.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { problemEvaluation, type OptimizePlan } from './optimize-plan.js';
import type { ProblemEntry } from './problem-search.js';
import { storedCandidateAttempt } from './problem-state-loader.js';
import type { RecordedProblemSession } from './recorded-problem-session.js';
import { SearchStoppedError } from '../search/state/search-stopped-error.js';

/**
 * The event a running search records when it takes a person's edited candidate to evaluate
 * through its own evaluator; `kforge serve` waits for it before evaluating the edit itself.
 */
export const EDIT_CLAIMED_EVENT = 'edit-claimed';
/** Recorded when the search has acted on a `stop` action (the run then ends as `stopped`). */
export const STOP_ACKNOWLEDGED_EVENT = 'stop-acknowledged';
/** Recorded when a hint reached the prompts of the problems searched now. */
export const HINT_APPLIED_EVENT = 'hint-applied';

export interface RunInterventionsOptions {
  runId: string;
  plan: OptimizePlan;
  store: RunStore;
  evaluator: Evaluator;
  entries: readonly ProblemEntry[];
  signal: AbortSignal;
  /** The device name evaluations are keyed by when no session of the problem is live. */
  deviceName: () => string;
  /** Stops the run (a `stop` action). */
  stop: () => void;
  onError: (error: unknown) => void;
}

/**
 * What people do to a running search, applied while it runs: a `stop` ends the run (resumable),
 * a hint goes into the next prompts of its problem (or of every problem), and an edited
 * candidate is evaluated through the run's own evaluator (so it never times beside the
 * search's candidates) and joins its problem's history, where the strategy sees it as it sees
 * its own candidates. Pins and drops of ideas need nothing here: the ideas strategy reads them
 * from the store each round.
 */
export class RunInterventions {
  readonly #options: RunInterventionsOptions;
  readonly #sessions = new Map<string, RecordedProblemSession>();
  readonly #edits = new Set<Promise<void>>();

  constructor(options: RunInterventionsOptions) {
    this.#options = options;
  }

  /** Marks a problem's session live: hints and edits of that problem go to it. Returns the undo. */
  attach(problemHash: string, session: RecordedProblemSession): () => void {
    this.#sessions.set(problemHash, session);
    return () => {
      if (this.#sessions.get(problemHash) === session) this.#sessions.delete(problemHash);
    };
  }

  async handle(action: Action): Promise<void> {
    const { store, runId } = this.#options;
    if (action.type === 'stop') {
      await store.recordEvent({ runId, type: STOP_ACKNOWLEDGED_EVENT, payload: { actionId: action.id } });
      this.#options.stop();
    } else if (action.type === 'hint' && action.note) {
      const sessions =
        action.problemHash === null ? [...this.#sessions.values()] : [this.#sessions.get(action.problemHash)].filter((session) => session !== undefined);
      for (const session of sessions) session.addHint(action.note);
      const problems = action.problemHash === null ? [...this.#sessions.keys()] : sessions.length > 0 ? [action.problemHash] : [];
      await store.recordEvent({ runId, problemHash: action.problemHash, type: HINT_APPLIED_EVENT, payload: { actionId: action.id, liveProblems: problems } });
    } else if (action.type === 'edit-candidate' && action.candidateId !== null) {
      const edit = this.#takeEdit(action).catch((error: unknown) => {
        if (!SearchStoppedError.isInstance(error)) this.#options.onError(error);
      });
      this.#edits.add(edit);
      void edit.finally(() => this.#edits.delete(edit));
    }
  }

  /** Waits for the edited candidates being evaluated (a stop aborts them: they stay pending). */
  async drain(): Promise<void> {
    while (this.#edits.size > 0) await Promise.all([...this.#edits]);
  }

  async #takeEdit(action: Action): Promise<void> {
    const { store, runId, plan, signal } = this.#options;
    const stored = await store.getCandidate(action.candidateId!);
    if (!stored || stored.runId !== runId || signal.aborted) return;
    const entry = this.#options.entries.find((known) => known.record.hash === stored.problemHash);
    if (!entry) return;
    const idea = stored.ideaId === null ? null : await store.getIdea(stored.ideaId);
    const { candidate, attempt } = storedCandidateAttempt(
      stored,
      candidateFilePath(plan.candidatesDir, entry.stem, entry.record.hash, stored.id),
      idea ? { id: idea.id, label: idea.label, text: idea.text } : null,
    );
    const session = this.#sessions.get(stored.problemHash);
    if (attempt) {
      session?.adopt(attempt);
      return;
    }
    await store.recordEvent({
      runId,
      problemHash: stored.problemHash,
      type: EDIT_CLAIMED_EVENT,
      payload: { candidateId: stored.id, actionId: action.id, live: session !== undefined },
    });
    if (session) {
      await session.evaluate(candidate);
      return;
    }
    const evaluator = new CandidateEvaluator({
      runId,
      problem: { hash: entry.record.hash, name: entry.stem, path: entry.path },
      store,
      evaluator: this.#options.evaluator,
      evaluation: problemEvaluation(plan, entry.givenPath),
      candidatesDir: plan.candidatesDir,
      deviceName: this.#options.deviceName(),
      signal,
    });
    await evaluator.evaluate(candidate);
  }
}
