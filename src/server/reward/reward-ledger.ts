import type { Logger } from 'pino';
import type { Backend, EvaluationResult } from '../../core/verdict.js';
import { StoreValidationError } from '../../store/errors/store-validation-error.js';
import type { Run, RunStore } from '../../store/run-store.js';
import type { RewardProblem } from './reward-problem-resolver.js';

/** A reward evaluation as the store keeps it. */
export interface StoredRewardEvaluation {
  result: EvaluationResult;
  candidateId: number;
  evaluationId: number;
}

export interface RecordRewardInput {
  problem: RewardProblem;
  backend: Backend;
  candidateSource: string;
  /** The request's cache key, stored as the evaluation's `cacheKey`. */
  requestHash: string;
  /** Hash of the normalised options, stored as the evaluation's `optionsHash`. */
  optionsHash: string;
  result: EvaluationResult;
  /** Wall time of the evaluation, in ms (stored as its device time). */
  durationMs: number;
}

/** Strategy and model names of the runs that hold reward evaluations. */
export const REWARD_RUN_STRATEGY = 'reward';
export const REWARD_RUN_MODEL = 'reward-api';

/** The run holding a problem's reward evaluations on a backend: `reward-cpu-<first 16 hex of the hash>`. */
export function rewardRunId(backend: Backend, problemHash: string): string {
  return `reward-${backend}-${problemHash.slice(0, 16)}`;
}

/**
 * Where reward evaluations persist: each in the store, as a candidate (origin `model`) with its
 * evaluation under the request's cache key, in a run of its own per problem and backend
 * (`reward-cpu-…`, strategy `reward`), so the dashboard shows them and `kforge report` exports
 * them. A run is made on first use and left `paused`: no process searches it, and it cannot be
 * resumed.
 */
export class RewardLedger {
  readonly #store: RunStore;
  readonly #logger: Logger;
  readonly #runs = new Map<string, Promise<Run>>();

  constructor(options: { store: RunStore; logger: Logger }) {
    this.#store = options.store;
    this.#logger = options.logger;
  }

  /** The stored evaluation of an identical request, if any. */
  async find(requestHash: string): Promise<StoredRewardEvaluation | undefined> {
    const evaluation = await this.#store.findEvaluationByCacheKey(requestHash);
    return evaluation && { result: evaluation.result, candidateId: evaluation.candidateId, evaluationId: evaluation.id };
  }

  /** Stores the candidate and its evaluation in the problem's reward run (made on first use). */
  async record(input: RecordRewardInput): Promise<StoredRewardEvaluation> {
    const run = await this.#runFor(input.problem, input.backend);
    const candidate = await this.#store.addCandidate({
      runId: run.id,
      problemHash: input.problem.hash,
      round: 0,
      source: input.candidateSource,
      origin: 'model',
    });
    const { evaluation } = await this.#store.recordEvaluation({
      candidateId: candidate.id,
      result: input.result,
      gpuSeconds: Math.max(0, input.durationMs) / 1000,
      optionsHash: input.optionsHash,
      cacheKey: input.requestHash,
    });
    return { result: evaluation.result, candidateId: candidate.id, evaluationId: evaluation.id };
  }

  #runFor(problem: RewardProblem, backend: Backend): Promise<Run> {
    const id = rewardRunId(backend, problem.hash);
    let run = this.#runs.get(id);
    if (!run) {
      run = this.#ensureRun(id, problem, backend);
      // A failure (a store fault) is tried again by the next request.
      run.catch(() => this.#runs.delete(id));
      this.#runs.set(id, run);
    }
    return run;
  }

  async #ensureRun(id: string, problem: RewardProblem, backend: Backend): Promise<Run> {
    const existing = await this.#store.getRun(id);
    if (existing) return existing;
    await this.#store.upsertProblem({ name: problem.name, source: problem.source, path: problem.path });
    try {
      await this.#store.createRun({
        id,
        strategy: REWARD_RUN_STRATEGY,
        model: REWARD_RUN_MODEL,
        config: { kind: 'reward', backend, problem: problem.name },
        problemHashes: [problem.hash],
      });
    } catch (error) {
      // Another server on the same store made it first.
      if (!(error instanceof StoreValidationError)) throw error;
      const made = await this.#store.getRun(id);
      if (made) return made;
      throw error;
    }
    this.#logger.info({ runId: id, problem: problem.name, backend }, 'made a reward run');
    return this.#store.updateRunStatus(id, 'paused');
  }
}
