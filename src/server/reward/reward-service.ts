import type { Logger } from 'pino';
import { resolveRewardShaping, type RewardShaping } from '../../core/reward-shaping-schema.js';
import { shapeReward } from '../../core/reward-shaping.js';
import type { EvaluationResult } from '../../core/verdict.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { hashEvaluationOptions, sha256Hex } from '../../store/content-hash.js';
import type { RunStore } from '../../store/run-store.js';
import { ApiError } from '../http/api-error.js';
import type { RewardBatchRequestBody, RewardBatchResponse, RewardRequestBody, RewardResponse } from '../api-schemas/reward-schemas.js';
import { RewardAdmission } from './reward-admission.js';
import { RewardLedger } from './reward-ledger.js';
import { RewardProblemResolver, type RewardProblem, type ShippedProblem } from './reward-problem-resolver.js';
import { evaluationRequestOf, normaliseRewardOptions, rewardRequestHash, type GivenRewardOptions, type RewardEvaluationOptions } from './reward-request-key.js';
import type { RewardServerOptions } from './reward-server-options.js';
import { RewardWorkFiles } from './reward-work-files.js';
import { rewardFailure } from './reward-failure.js';

/** What {@link RewardService} is wired to (see {@link RewardServerOptions} for the defaults `createServer` fills in). */
export interface RewardServiceOptions {
  store: RunStore;
  evaluator: Evaluator;
  logger: Logger;
  problemsDirectory: string;
  workDirectory?: string | undefined;
  concurrency: number;
  maxWaiting: number;
  /** Results of recent evaluations kept in memory, in front of the store. Default 256. */
  recentResults?: number;
  /** Milliseconds clock. Default `performance.now`. */
  now?: () => number;
}

/** One request, ready to look up or evaluate. */
interface PreparedReward {
  problem: RewardProblem;
  candidateSource: string;
  options: RewardEvaluationOptions;
  requestHash: string;
}

/** An evaluation's result and where it came from. */
interface Obtained {
  result: EvaluationResult;
  candidateId: number | null;
  evaluationId: number | null;
  source: RewardResponse['source'];
}

/** Reason checks by which the worker blames the problem file, not the candidate (`worker/kforge_worker/problem/problem_loader.py`, `inputs.py`). */
const PROBLEM_CHECKS = new Set(['problem-load', 'problem-inputs']);

/** What {@link RewardService} does for one request: answer at once, wait for a running evaluation, or start one. */
type Plan = { kind: 'ready'; obtained: Obtained } | { kind: 'join' | 'start'; requestHash: string };

/**
 * Rewards for candidates: each request's evaluation is looked up by its cache key (recent results,
 * then the store), shared with an identical evaluation already running, or run by the evaluator
 * under {@link RewardAdmission}'s bounds and stored in the problem's reward run; the shaping
 * is then applied to the result. Requests are validated by the routes before they get here.
 */
export class RewardService {
  readonly #options: RewardServiceOptions;
  readonly #resolver: RewardProblemResolver;
  readonly #ledger: RewardLedger;
  readonly #admission: RewardAdmission;
  readonly #files: RewardWorkFiles;
  readonly #inFlight = new Map<string, Promise<Obtained>>();
  readonly #recent = new Map<string, Obtained>();
  readonly #controller = new AbortController();
  readonly #now: () => number;

  constructor(options: RewardServiceOptions) {
    this.#options = options;
    this.#resolver = new RewardProblemResolver({ store: options.store, problemsDirectory: options.problemsDirectory });
    this.#ledger = new RewardLedger({ store: options.store, logger: options.logger });
    this.#admission = new RewardAdmission({ concurrency: options.concurrency, maxWaiting: options.maxWaiting });
    this.#files = new RewardWorkFiles(options.workDirectory);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Evaluations running and waiting now, and the bounds. */
  load(): { running: number; waiting: number; concurrency: number; maxWaiting: number; inFlight: number } {
    return { ...this.#admission.counts(), concurrency: this.#admission.concurrency, maxWaiting: this.#admission.maxWaiting, inFlight: this.#inFlight.size };
  }

  listProblems(): Promise<ShippedProblem[]> {
    return this.#resolver.list();
  }

  /**
   * The reward of one candidate.
   *
   * @throws ApiError 404 for an unknown problem; RewardBusyError when too many evaluations wait;
   *   RewardUnavailableError when the evaluator failed or the server is stopping.
   */
  async reward(body: RewardRequestBody): Promise<RewardResponse> {
    const shaping = resolveRewardShaping(body.shaping);
    const prepared = this.#prepare(await this.#resolver.resolve(body), body.candidateSource, body);
    const [obtained] = await this.#obtainAll([prepared]);
    return this.#respond(prepared, obtained!, shaping);
  }

  /** Rewards of many candidates, evaluated concurrently, in request order. Same errors as {@link reward}. */
  async rewardBatch(body: RewardBatchRequestBody): Promise<RewardBatchResponse> {
    const shaping = resolveRewardShaping(body.shaping);
    const problems = new Map<string, Promise<RewardProblem>>();
    const resolveOnce = (
      input: { problem?: string | undefined; problemSource?: string | undefined; problemName?: string | undefined },
      index: number,
    ): Promise<RewardProblem> => {
      const key = input.problemSource !== undefined ? `source:${sha256Hex(input.problemSource)}:${input.problemName ?? ''}` : `name:${input.problem}`;
      let found = problems.get(key);
      if (!found) {
        found = this.#resolver.resolve(input);
        problems.set(key, found);
      }
      return found.catch((error: unknown) => {
        if (error instanceof ApiError)
          throw new ApiError(error.statusCode, error.code, `\`items.${index}\`: ${error.message}`, { field: `body.items.${index}.problem`, cause: error });
        throw error;
      });
    };
    const prepared = await Promise.all(
      body.items.map(async (item, index) => {
        const named = item.problem !== undefined || item.problemSource !== undefined ? item : body;
        return this.#prepare(await resolveOnce(named, index), item.candidateSource, body);
      }),
    );
    const obtained = await this.#obtainAll(prepared);
    const results = prepared.map((entry, index) => this.#respond(entry, obtained[index]!, shaping, index));
    const evaluated = results.filter((result) => result.source === 'evaluated').length;
    return { results, evaluated, cached: results.length - evaluated };
  }

  /** Cancels the evaluations in flight (their requests get 503), waits for them and removes the work files. */
  async close(): Promise<void> {
    this.#controller.abort(new Error('the reward server is stopping'));
    await Promise.allSettled([...this.#inFlight.values()]);
    await this.#files.close();
  }

  #prepare(problem: RewardProblem, candidateSource: string, given: GivenRewardOptions): PreparedReward {
    const options = normaliseRewardOptions(given);
    return {
      problem,
      candidateSource,
      options,
      requestHash: rewardRequestHash({ problemSha256: problem.hash, candidateSha256: sha256Hex(candidateSource), options }),
    };
  }

  /**
   * Each request's evaluation: recent or stored, shared with one in flight, or started now. The
   * admission check and the starts happen in one tick after the lookups, so a busy server starts
   * none of a batch it refuses. Every started evaluation settles before this returns, so a batch
   * refused for a fault of one item still leaves the others stored for its retry.
   */
  async #obtainAll(prepared: readonly PreparedReward[]): Promise<Obtained[]> {
    const stored = await Promise.all(prepared.map((entry) => (this.#recent.has(entry.requestHash) ? undefined : this.#ledger.find(entry.requestHash))));
    const starting = new Map<string, PreparedReward>();
    const plans = prepared.map((entry, index): Plan => {
      const found = this.#recent.get(entry.requestHash) ?? stored[index];
      if (found) return { kind: 'ready', obtained: { ...found, source: 'store' } };
      if (this.#inFlight.has(entry.requestHash)) return { kind: 'join', requestHash: entry.requestHash };
      if (starting.has(entry.requestHash)) return { kind: 'join', requestHash: entry.requestHash };
      starting.set(entry.requestHash, entry);
      return { kind: 'start', requestHash: entry.requestHash };
    });
    if (starting.size > this.#admission.capacity) {
      throw new ApiError(
        400,
        'batch-too-large',
        `this batch needs ${starting.size} evaluations but the server admits at most ${this.#admission.capacity} at once (--reward-concurrency plus --reward-queue): split it`,
      );
    }
    this.#admission.admit(starting.size);
    for (const [hash, entry] of starting) this.#inFlight.set(hash, this.#evaluate(entry));
    const settled = await Promise.allSettled(
      plans.map((plan): Promise<Obtained> => {
        if (plan.kind === 'ready') return Promise.resolve(plan.obtained);
        const running = this.#inFlight.get(plan.requestHash)!;
        return plan.kind === 'start' ? running : running.then((shared) => ({ ...shared, source: 'in-flight' }));
      }),
    );
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<Obtained>).value);
  }

  /** Runs one evaluation in an admission slot; it leaves the in-flight map once its result is remembered. */
  #evaluate(entry: PreparedReward): Promise<Obtained> {
    const signal = this.#controller.signal;
    return this.#admission
      .run(() => this.#runEvaluation(entry), signal)
      .catch((error: unknown) => {
        throw this.#unavailable(error);
      })
      .finally(() => this.#inFlight.delete(entry.requestHash));
  }

  async #runEvaluation(entry: PreparedReward): Promise<Obtained> {
    const { evaluator, logger } = this.#options;
    const problemPath = await this.#files.problemPath(entry.problem);
    const candidatePath = await this.#files.writeCandidate(entry.requestHash, entry.candidateSource);
    try {
      const startedMs = this.#now();
      const { result } = await evaluator.evaluate(evaluationRequestOf(entry.options, { problemPath, candidatePath }), {
        signal: this.#controller.signal,
      });
      const durationMs = this.#now() - startedMs;
      const stored = await this.#ledger
        .record({
          problem: entry.problem,
          backend: entry.options.backend,
          candidateSource: entry.candidateSource,
          requestHash: entry.requestHash,
          optionsHash: hashEvaluationOptions({ ...entry.options }),
          result,
          durationMs,
        })
        .catch((error: unknown) => {
          logger.error({ err: error, requestHash: entry.requestHash }, 'could not store a reward evaluation; it will be evaluated again when asked again');
          return null;
        });
      const obtained: Obtained = { result, candidateId: stored?.candidateId ?? null, evaluationId: stored?.evaluationId ?? null, source: 'evaluated' };
      if (stored) this.#remember(entry.requestHash, obtained);
      logger.debug({ requestHash: entry.requestHash, verdict: result.verdict, durationMs }, 'reward evaluation finished');
      return obtained;
    } finally {
      await this.#files.removeCandidate(candidatePath);
    }
  }

  #remember(requestHash: string, obtained: Obtained): void {
    const limit = this.#options.recentResults ?? 256;
    if (limit <= 0) return;
    this.#recent.delete(requestHash);
    this.#recent.set(requestHash, obtained);
    while (this.#recent.size > limit) this.#recent.delete(this.#recent.keys().next().value!);
  }

  #unavailable(error: unknown): unknown {
    return rewardFailure(error, this.#controller.signal.aborted, this.#options.logger);
  }

  #respond(entry: PreparedReward, obtained: Obtained, shaping: RewardShaping, itemIndex?: number): RewardResponse {
    const problemFault = obtained.result.verdict === 'invalid_input' ? obtained.result.reasons.find((reason) => PROBLEM_CHECKS.has(reason.check)) : undefined;
    if (problemFault) {
      // The problem is unusable: that is the caller's input, not the candidate's failure, so nothing is scored.
      const where = itemIndex === undefined ? '' : `\`items.${itemIndex}\`: `;
      throw new ApiError(
        422,
        'problem-invalid',
        `${where}the problem ${entry.problem.label} cannot be evaluated (${problemFault.check}): ${problemFault.message}`,
        { field: itemIndex === undefined ? 'body.problem' : `body.items.${itemIndex}.problem` },
      );
    }
    const shaped = shapeReward(obtained.result, shaping);
    return {
      reward: shaped.reward,
      shaping: shaped,
      verdict: obtained.result.verdict,
      result: obtained.result,
      cached: obtained.source !== 'evaluated',
      source: obtained.source,
      requestHash: entry.requestHash,
      problemHash: entry.problem.hash,
      candidateId: obtained.candidateId,
      evaluationId: obtained.evaluationId,
    };
  }
}
