import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { candidateFilePath } from '../../agent/run/candidate-evaluator.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { evaluationCacheKey, hashEvaluationOptions, sha256Hex } from '../../store/content-hash.js';
import type { Action, Candidate, ProblemRecord, RunStore } from '../../store/run-store.js';
import { EDIT_CLAIMED_EVENT } from '../../agent/run/run-interventions.js';
import { ApiError } from '../http/api-error.js';
import type { EvaluationTracker } from '../views/candidate-node.js';
import { evaluationSettingsOf, readRunPlan } from '../views/run-plan.js';

export interface CandidateEditServiceOptions {
  store: RunStore;
  evaluator: Evaluator;
  logger: Logger;
  /** Where candidate and problem files are written for the evaluator. Default: the run's own `candidatesDir`. */
  candidatesDirectory?: string;
  /**
   * How long to wait for a running search to claim an edit of its run (it polls its actions every
   * second and evaluates the edit through its own evaluator). Milliseconds; default 5000.
   */
  claimWaitMs?: number;
}

export interface SubmittedEdit {
  action: Action;
  candidate: Candidate;
}

/** The file the evaluator reads for a problem: its own path while it still holds the stored source, else a snapshot. */
async function problemFile(record: ProblemRecord, candidatesDirectory: string): Promise<string> {
  if (record.path) {
    const current = await readFile(record.path, 'utf8').catch(() => null);
    if (current !== null && sha256Hex(current) === record.hash) return path.resolve(record.path);
  }
  const snapshot = path.resolve(candidatesDirectory, 'problems', `${record.name}-${record.hash.slice(0, 8)}.py`);
  await mkdir(path.dirname(snapshot), { recursive: true });
  await writeFile(snapshot, record.source, 'utf8');
  return snapshot;
}

/**
 * A person's edit of a candidate, evaluated as a new candidate: stored as the child of the
 * original with origin `human` and an `edit-candidate` action, then evaluated through the
 * injected {@link Evaluator} under the run's own evaluation settings, one edit at a time, and
 * the evaluation recorded (its `candidate-evaluated` event tells the page).
 */
export class CandidateEditService implements EvaluationTracker {
  readonly #options: CandidateEditServiceOptions;
  readonly #running = new Set<number>();
  readonly #errors = new Map<number, string>();
  readonly #controller = new AbortController();
  #chain: Promise<void> = Promise.resolve();

  constructor(options: CandidateEditServiceOptions) {
    this.#options = options;
  }

  isEvaluating(candidateId: number): boolean {
    return this.#running.has(candidateId);
  }

  errorOf(candidateId: number): string | null {
    return this.#errors.get(candidateId) ?? null;
  }

  /**
   * Stores the edit and queues its evaluation; resolves once it is stored, before it is evaluated.
   *
   * @throws ApiError 404 for an unknown candidate, 409 for a run without stored evaluation settings.
   */
  async submit(input: { candidateId: number; source: string; note?: string | undefined }): Promise<SubmittedEdit> {
    const { store } = this.#options;
    const original = await store.getCandidate(input.candidateId);
    if (!original) throw ApiError.notFound(`no candidate ${input.candidateId} in ${store.location}`);
    const run = await store.getRun(original.runId);
    const plan = run ? readRunPlan(run) : null;
    if (!plan) {
      throw ApiError.conflict(
        'no-evaluation-settings',
        `run \`${original.runId}\` has no evaluation settings this version reads (it was not made by \`kforge optimize\`), so an edit cannot be evaluated under them`,
      );
    }
    const candidate = await store.addCandidate({
      runId: original.runId,
      problemHash: original.problemHash,
      parentId: original.id,
      round: original.round + 1,
      ideaId: original.ideaId,
      source: input.source,
      origin: 'human',
    });
    const action = await store.recordAction({
      runId: original.runId,
      type: 'edit-candidate',
      candidateId: candidate.id,
      note: input.note ?? `edited from candidate #${original.id}`,
    });
    this.#running.add(candidate.id);
    const directory = this.#options.candidatesDirectory ?? plan.candidatesDir;
    const settings = evaluationSettingsOf(plan);
    this.#chain = this.#chain.then(() => this.#evaluate(candidate, directory, settings));
    return { action, candidate };
  }

  /** Resolves when every queued evaluation has finished (or failed). */
  idle(): Promise<void> {
    return this.#chain;
  }

  /** Cancels the evaluations in flight and waits for them; their candidates stay unevaluated. */
  async close(): Promise<void> {
    this.#controller.abort(new Error('the server is shutting down'));
    await this.#chain;
  }

  /**
   * Whether the run's own search took the edit (it records {@link EDIT_CLAIMED_EVENT}): then the
   * search evaluates it on the device it holds, and this service only follows it until its
   * evaluation is stored. A run that is not running, or whose process died, never claims it.
   */
  async #claimedByRun(candidate: Candidate): Promise<boolean> {
    const { store } = this.#options;
    const run = await store.getRun(candidate.runId);
    if (run?.status !== 'running') return false;
    const deadline = Date.now() + (this.#options.claimWaitMs ?? 5000);
    for (;;) {
      const events = await store.listEvents(candidate.runId, { problemHash: candidate.problemHash, types: [EDIT_CLAIMED_EVENT] });
      if (events.some((event) => event.payload.candidateId === candidate.id)) return true;
      if (Date.now() >= deadline || this.#controller.signal.aborted) return false;
      await delay(250);
    }
  }

  /** Keeps a claimed candidate marked as evaluating until the run stores its evaluation or stops running. */
  async #follow(candidate: Candidate): Promise<void> {
    const { store } = this.#options;
    try {
      while (!this.#controller.signal.aborted) {
        const [stored, run] = await Promise.all([store.getCandidate(candidate.id), store.getRun(candidate.runId)]);
        if (stored?.evaluation || run?.status !== 'running') return;
        await delay(1000);
      }
    } finally {
      this.#running.delete(candidate.id);
    }
  }

  async #evaluate(candidate: Candidate, directory: string, settings: ReturnType<typeof evaluationSettingsOf>): Promise<void> {
    const { store, evaluator, logger } = this.#options;
    if (await this.#claimedByRun(candidate).catch(() => false)) {
      void this.#follow(candidate).catch((error: unknown) =>
        logger.warn({ err: error, candidateId: candidate.id }, 'following an edit the run evaluates failed'),
      );
      return;
    }
    try {
      if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
      const record = await store.getProblem(candidate.problemHash);
      if (!record) throw new Error(`problem ${candidate.problemHash} is missing from the store`);
      const problemPath = await problemFile(record, directory);
      const stem = record.path ? path.basename(record.path, '.py') : record.name;
      const candidatePath = candidateFilePath(directory, stem, record.hash, candidate.id);
      await mkdir(path.dirname(candidatePath), { recursive: true });
      await writeFile(candidatePath, candidate.source, 'utf8');
      const { result, usage } = await evaluator.evaluate({ ...settings, problemPath, candidatePath }, { signal: this.#controller.signal });
      const optionsHash = hashEvaluationOptions({ ...settings, device: result.environment?.device ?? 'unknown' });
      await store.recordEvaluation({
        candidateId: candidate.id,
        result,
        gpuSeconds: usage.heldMs / 1000,
        optionsHash,
        cacheKey: evaluationCacheKey({ sourceHash: candidate.sourceHash, problemHash: candidate.problemHash, optionsHash }),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#errors.set(candidate.id, message);
      logger.error({ err: error, candidateId: candidate.id }, 'evaluating an edited candidate failed');
      await store
        .recordEvent({
          runId: candidate.runId,
          problemHash: candidate.problemHash,
          type: 'candidate-evaluation-failed',
          payload: { candidateId: candidate.id, message },
        })
        .catch((recordError: unknown) => logger.error({ err: recordError }, 'could not record the failed evaluation'));
    } finally {
      this.#running.delete(candidate.id);
    }
  }
}
