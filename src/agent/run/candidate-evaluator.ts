import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EvaluationResult } from '../../core/verdict.js';
import type { Evaluation, EvaluationProgress, EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import { evaluationCacheKey, hashEvaluationOptions, sha256Hex } from '../../store/content-hash.js';
import type { RunStore } from '../../store/run-store.js';
import type { CandidateRecord, Lineage } from '../search/state/attempt.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { CandidateUnevaluatedError } from './candidate-unevaluated-error.js';
import { SearchStoppedError } from '../search/state/search-stopped-error.js';

export interface CandidateEvaluatorOptions {
  runId: string;
  problem: { hash: string; name: string; path: string };
  store: RunStore;
  /** Judges the candidates; its usage's `heldMs` is the device time recorded (`gpuSeconds`). */
  evaluator: Evaluator;
  evaluation: Omit<EvaluationRequest, 'problemPath' | 'candidatePath'>;
  /** Candidate files go to {@link candidateFilePath}. */
  candidatesDir: string;
  /** The device's name, part of the cache key: a result holds for the device it was measured on. */
  deviceName: string;
  signal: AbortSignal;
  /** Further attempts after the machine could not evaluate a candidate (no verdict). Default 2. */
  machineRetries?: number;
  /** Wait before each further attempt, ms. Default: the fault's own `retryAfterSeconds`. */
  machineRetryDelayMs?: number;
  /** Told of each attempt the machine could not finish (a run event is recorded by the caller). */
  onMachineFault?: (fault: { attempt: number; willRetry: boolean; message: string }) => void;
  /** Each stage of a candidate's evaluation as it starts and ends (progress views). */
  onProgress?: (candidateId: number, progress: EvaluationProgress) => void;
}

/** `<candidatesDir>/<problem stem>-<hash prefix>/candidate-<id>.py`, absolute. */
export function candidateFilePath(candidatesDir: string, problemStem: string, problemHash: string, candidateId: number): string {
  return path.resolve(candidatesDir, `${problemStem}-${problemHash.slice(0, 8)}`, `candidate-${candidateId}.py`);
}

/** An evaluation as recorded: the result, device time, and whether it was reused by cache key. */
export interface RecordedEvaluation {
  result: EvaluationResult;
  deviceMs: number;
  reused: boolean;
}

/**
 * Stores candidates, writes their files and has them evaluated once: a candidate whose source was
 * already evaluated under the same options (in any run) reuses that evaluation instead of taking
 * the device again.
 */
export class CandidateEvaluator {
  private readonly optionsHash: string;

  constructor(private readonly options: CandidateEvaluatorOptions) {
    this.optionsHash = hashEvaluationOptions({ ...options.evaluation, device: options.deviceName });
  }

  /** Where a candidate's file lies. */
  candidatePath(candidateId: number): string {
    const { candidatesDir, problem } = this.options;
    return candidateFilePath(candidatesDir, problem.name, problem.hash, candidateId);
  }

  /** Stores a candidate the model wrote and writes its file. */
  async add(source: string, lineage: Lineage, modelCallId: number | null): Promise<CandidateRecord> {
    const stored = await this.options.store.addCandidate({
      runId: this.options.runId,
      problemHash: this.options.problem.hash,
      parentId: lineage.parentCandidateId,
      round: lineage.round,
      ideaId: lineage.idea?.id ?? null,
      source,
      origin: 'model',
      modelCallId,
    });
    return { id: stored.id, source, path: this.candidatePath(stored.id), lineage, modelCallId };
  }

  /**
   * Evaluates a stored candidate and records the result (the store keeps the first evaluation of
   * a candidate, so a repeat after a crash writes nothing twice). An abort of the run's signal
   * throws `SearchStoppedError` and records nothing: the candidate stays pending for a resume.
   */
  async evaluate(candidate: CandidateRecord): Promise<RecordedEvaluation> {
    const { store, evaluator, signal } = this.options;
    const cacheKey = evaluationCacheKey({ sourceHash: sha256Hex(candidate.source), problemHash: this.options.problem.hash, optionsHash: this.optionsHash });
    const cached = await store.findEvaluationByCacheKey(cacheKey);
    if (cached && cached.candidateId !== candidate.id) {
      await store.recordEvaluation({
        candidateId: candidate.id,
        result: cached.result,
        gpuSeconds: 0,
        optionsHash: this.optionsHash,
        cacheKey,
        reusedFromEvaluationId: cached.id,
      });
      return { result: cached.result, deviceMs: 0, reused: true };
    }
    if (cached) return { result: cached.result, deviceMs: cached.gpuSeconds * 1000, reused: false };
    await mkdir(path.dirname(candidate.path), { recursive: true });
    await writeFile(candidate.path, candidate.source, 'utf8');
    let evaluated: Evaluation;
    const { onProgress } = this.options;
    for (let attempt = 1; ; attempt += 1) {
      try {
        evaluated = await evaluator.evaluate(
          { ...this.options.evaluation, problemPath: this.options.problem.path, candidatePath: candidate.path },
          { signal, ...(onProgress ? { onProgress: (progress: EvaluationProgress) => onProgress(candidate.id, progress) } : {}) },
        );
        break;
      } catch (error) {
        if (signal.aborted) throw new SearchStoppedError('evaluation', { cause: error });
        if (!(error instanceof MachineFaultError || error instanceof WorkerFaultError)) throw error;
        const retries = this.options.machineRetries ?? 2;
        // A reference too slow for its stage at these sizes (a pace the worker measured) would only
        // fail again: the run stops at once, its message naming sizes that fit (docs/sizes.md).
        const willRetry = !(error instanceof MachineFaultError && !error.isRetryable) && attempt <= retries;
        this.options.onMachineFault?.({ attempt, willRetry, message: error.message });
        if (!willRetry) throw new CandidateUnevaluatedError(candidate.id, attempt, error);
        await sleep(this.options.machineRetryDelayMs ?? error.retryAfterSeconds * 1000, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) throw new SearchStoppedError('evaluation', { cause: error });
      }
    }
    if (signal.aborted) throw new SearchStoppedError('evaluation');
    const outcome = await store.recordEvaluation({
      candidateId: candidate.id,
      result: evaluated.result,
      gpuSeconds: evaluated.usage.heldMs / 1000,
      optionsHash: this.optionsHash,
      cacheKey,
    });
    return { result: outcome.evaluation.result, deviceMs: evaluated.usage.heldMs, reused: false };
  }
}
