import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import type { ActiveJob, ActiveJobs } from './active-jobs.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import { encodeJobFailure, type EvaluationJobOutcome, type JobProgress } from '../evaluation-job-messages.js';
import { evaluationJobPayloadSchema, requestOfPayload, type EvaluationJobPayload } from '../evaluation-job-payload.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { forgetJobAttempt, startJobAttempt, type StartedAttempt } from '../job-attempts.js';
import type { QueueRedisKeys } from './redis-keys.js';
import { workerLostResult } from './lost-job-result.js';

/** Who a worker is, as attempts and outcomes record it. */
export interface WorkerIdentity {
  workerId: string;
  host: string;
  pid: number;
}

export interface EvaluationJobProcessorOptions {
  /** Usually a PipelinedEvaluator (its pipeline events are relayed); any Evaluator works. */
  evaluator: Evaluator;
  redis: Redis;
  keys: QueueRedisKeys;
  identity: WorkerIdentity;
  active: ActiveJobs;
  logger: Logger;
  /** Where each job's sources are written. Default: the system's temporary folder. */
  scratchRoot?: string;
  /** Called once a start is recorded, before evaluating (the test hook that kills the worker lives here). */
  onAttemptStarted?: (started: { jobId: string; payload: EvaluationJobPayload; attempt: StartedAttempt }) => void;
  /**
   * Called when a job ends here, with its verdict (null when it failed or went back to the queue);
   * awaited before the job's outcome reaches the queue, so what it records is visible by then.
   */
  onJobEnded?: (jobId: string, verdict: EvaluationResult['verdict'] | null) => void | Promise<void>;
  now?: () => Date;
}

/** A BullMQ processor (three parameters, so BullMQ passes its AbortSignal). */
export type EvaluationJobProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<EvaluationJobOutcome>;

/**
 * Writes the job's sources to a fresh scratch folder: `problem/<name>` with a problem folder's
 * declarations beside it (`problem/shapes.py`, `problem/problem.yaml`: the folder the worker then
 * reads, as it reads the original on a local evaluation) and `candidate/<name>`.
 */
async function writeSources(
  payload: EvaluationJobPayload,
  scratchRoot: string | undefined,
): Promise<{ folder: string; problemPath: string; candidatePath: string }> {
  const folder = await mkdtemp(path.join(scratchRoot ?? os.tmpdir(), 'kforge-job-'));
  const problemPath = path.join(folder, 'problem', payload.problem.name);
  const candidatePath = path.join(folder, 'candidate', payload.candidate.name);
  await Promise.all([mkdir(path.dirname(problemPath)), mkdir(path.dirname(candidatePath))]);
  await Promise.all([
    writeFile(problemPath, payload.problem.source, 'utf8'),
    ...(payload.declarations ?? []).map((file) => writeFile(path.join(path.dirname(problemPath), file.name), file.source, 'utf8')),
    writeFile(candidatePath, payload.candidate.source, 'utf8'),
  ]);
  return { folder, problemPath, candidatePath };
}

/** Publishes progress without waiting (a Redis hiccup must not hold the evaluation up). */
function publish(job: Job, progress: JobProgress, logger: Logger): void {
  job.updateProgress(progress).catch((error: unknown) => logger.debug({ err: error, jobId: job.id }, 'could not publish job progress'));
}

/**
 * The processor of evaluation jobs: validates the payload, records the start (a job started
 * `maxAttempts` times whose workers all died ends `crashed` here without being evaluated),
 * writes the sources to scratch files, evaluates them, and returns the result with the payload's
 * names in place of the scratch paths. Cancellation and setup faults fail the job (never a
 * candidate's failure); a job returned by a stopping worker goes back to the queue uncounted.
 */
export function createEvaluationJobProcessor(options: EvaluationJobProcessorOptions): EvaluationJobProcessor {
  const now = options.now ?? (() => new Date());
  return (job: Job, token?: string, signal?: AbortSignal) => processJob(options, now, job, token, signal);
}

/** One job, from its payload to its outcome (see {@link createEvaluationJobProcessor}). */
async function processJob(
  options: EvaluationJobProcessorOptions,
  now: () => Date,
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
): Promise<EvaluationJobOutcome> {
  const { redis, keys, identity, active, logger } = options;
  const jobId = job.id ?? '';
  const payload = await admittedPayload(options, job);
  const startedAt = now();
  const { started, previous } = await startJobAttempt(redis, keys.attempts(jobId), payload.maxAttempts, {
    workerId: identity.workerId,
    host: identity.host,
    pid: identity.pid,
    startedAt: startedAt.toISOString(),
  });
  if (!started) {
    logger.warn({ jobId, attempts: previous.length }, 'job reached its attempts bound: it ends crashed');
    await options.onJobEnded?.(jobId, 'crashed');
    return { v: 1, result: workerLostResult(payload, previous), workerId: identity.workerId, host: identity.host, attempts: previous, durationMs: 0 };
  }
  const tracked = active.add({
    jobId,
    problem: payload.problem.name,
    candidate: payload.candidate.name,
    attempt: started.attempt.attempt,
    startedAt: startedAt.toISOString(),
  });
  try {
    options.onAttemptStarted?.({ jobId, payload, attempt: started });
    const result = await evaluate(options, job, payload, tracked.job, signal);
    await options.onJobEnded?.(jobId, result.verdict);
    return {
      v: 1,
      result,
      workerId: identity.workerId,
      host: identity.host,
      attempts: [...previous, started.attempt],
      durationMs: now().getTime() - startedAt.getTime(),
    };
  } catch (error) {
    throw await failure(options, job, token, tracked.job, started, error);
  } finally {
    tracked.remove();
  }
}

/** The job's payload, once it is one this worker reads and the job was not cancelled before it started; else the job fails for good. */
async function admittedPayload(options: EvaluationJobProcessorOptions, job: Job): Promise<EvaluationJobPayload> {
  const jobId = job.id ?? '';
  const parsed = evaluationJobPayloadSchema.safeParse(job.data);
  if (!parsed.success) {
    await options.onJobEnded?.(jobId, null);
    throw new UnrecoverableError(
      encodeJobFailure({
        kind: 'invalid-payload',
        message: `the job's payload is not one this worker reads: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
      }),
    );
  }
  if ((await options.redis.exists(options.keys.cancel(jobId))) === 1) {
    await options.onJobEnded?.(jobId, null);
    throw new UnrecoverableError(encodeJobFailure({ kind: 'cancelled', message: 'the job was cancelled before it started' }));
  }
  return parsed.data;
}

/** Evaluates the job's sources from scratch files, relaying its progress, and names the result after the payload. */
async function evaluate(
  options: EvaluationJobProcessorOptions,
  job: Job,
  payload: EvaluationJobPayload,
  tracked: ActiveJob,
  signal: AbortSignal | undefined,
): Promise<EvaluationResult> {
  const { identity, logger } = options;
  const scratch = await writeSources(payload, options.scratchRoot);
  const signals = [tracked.returnController.signal, tracked.cancelController.signal, ...(signal ? [signal] : [])];
  try {
    const { result } = await options.evaluator.evaluate(requestOfPayload(payload, scratch), {
      signal: AbortSignal.any(signals),
      onProgress: (progress) => {
        tracked.stage = progress.kind === 'stage-started' ? `${progress.role}:${progress.stage}` : null;
        publish(job, { kind: 'stage', workerId: identity.workerId, progress }, logger);
      },
      onPipelineEvent: (event) => {
        if (event.kind === 'device-acquired') tracked.device = event.device;
        if (event.kind === 'device-released') tracked.device = null;
        publish(job, { kind: 'pipeline', workerId: identity.workerId, event }, logger);
      },
    });
    const valid = evaluationResultSchema.parse(result);
    return { ...valid, problem: payload.problem.name, candidate: payload.candidate.name };
  } finally {
    await rm(scratch.folder, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The error the processor ends with: back to the queue, cancelled, a setup fault, or kforge's own. */
async function failure(
  options: EvaluationJobProcessorOptions,
  job: Job,
  token: string | undefined,
  tracked: ActiveJob,
  started: StartedAttempt,
  error: unknown,
): Promise<Error> {
  const { redis, keys, identity, logger } = options;
  const jobId = job.id ?? '';
  await options.onJobEnded?.(jobId, null);
  if (tracked.returnController.signal.aborted && !tracked.cancelController.signal.aborted) {
    await forgetJobAttempt(redis, keys.attempts(jobId), started);
    await job.moveToWait(token);
    logger.info({ jobId }, 'returned the job to the queue');
    return new WaitingError();
  }
  if (error instanceof EvaluationCancelledError) {
    return new UnrecoverableError(encodeJobFailure({ kind: 'cancelled', message: 'the job was cancelled while it ran; its workers were stopped' }));
  }
  if (error instanceof MachineFaultError) {
    logger.warn({ jobId, resource: error.resource, role: error.role, stage: error.stage, detail: error.detail }, error.message);
    return new UnrecoverableError(
      encodeJobFailure({
        kind: 'machine',
        message: `worker ${identity.workerId} on ${identity.host}: ${error.message}`,
        hint: error.hint,
        machine: {
          resource: error.resource,
          ...(error.role ? { role: error.role } : {}),
          stage: error.stage,
          retryAfterSeconds: error.retryAfterSeconds,
        },
      }),
    );
  }
  if (error instanceof EvaluatorSetupError) {
    return new UnrecoverableError(
      encodeJobFailure({
        kind: 'setup',
        message: `worker ${identity.workerId} on ${identity.host}: ${error.message}`,
        ...(error.hint ? { hint: error.hint } : {}),
      }),
    );
  }
  logger.error({ err: error, jobId }, 'the evaluation failed with a fault of kforge');
  const message = error instanceof Error ? error.message : String(error);
  return new UnrecoverableError(encodeJobFailure({ kind: 'internal', message: `worker ${identity.workerId} on ${identity.host}: ${message}` }));
}
