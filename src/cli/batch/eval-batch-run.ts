import path from 'node:path';
import { measuringPolicy } from '../../core/measuring-policy.js';
import type { EvaluationResult, Verdict } from '../../core/verdict.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { EXIT, type TextSink } from '../io/cli-io.js';
import type { EvaluationPair } from './eval-batch-inputs.js';
import { resumeKey, type ResumeJournal } from './eval-batch-resume.js';
import { formatDuration, formatProblemName, formatSpeedup } from '../rendering/format.js';

/** A batch line for a candidate the machine (or kforge) could not evaluate: no verdict. */
export interface UnevaluatedLine {
  problem: string;
  candidate: string;
  error: { kind: 'machine_fault' | 'kforge_fault' | 'too_large'; resource: string | null; message: string; hint: string | null; attempts: number };
}

export interface BatchRunOptions {
  pairs: readonly EvaluationPair[];
  requestOf: (pair: EvaluationPair) => EvaluationRequest;
  evaluator: Evaluator;
  json: boolean;
  stdout: TextSink;
  stderr: TextSink;
  /** Further attempts after a machine or kforge fault (default 2), `retryDelayMs` apart (default 5000). */
  retries?: number;
  retryDelayMs?: number;
  signal?: AbortSignal;
  /** Options of each evaluation (progress, pipeline events). */
  evaluateOptions?: EvaluateOptions;
  /** `--resume FILE`: verdicts taken from it, and every finished line appended to it. */
  journal?: ResumeJournal;
}

/** What a batch did: the verdicts and the candidates left without one. */
export interface BatchSummary {
  results: EvaluationResult[];
  unevaluated: UnevaluatedLine[];
  wallMs: number;
  /** The time the evaluations held their devices, summed (their usage), in ms. */
  deviceMs: number;
  /** Results taken from the `--resume` file rather than evaluated in this run (in `results`). */
  resumed: number;
}

function unevaluated(pair: EvaluationPair, error: unknown, attempts: number): UnevaluatedLine | null {
  const base = { problem: pair.problemPath, candidate: pair.candidatePath };
  if (error instanceof ProblemTooLargeError) return { ...base, error: { kind: 'too_large', resource: 'memory', message: error.message, hint: null, attempts } };
  if (error instanceof MachineFaultError)
    return { ...base, error: { kind: 'machine_fault', resource: error.resource, message: error.message, hint: error.hint, attempts } };
  if (error instanceof WorkerFaultError) return { ...base, error: { kind: 'kforge_fault', resource: null, message: error.message, hint: null, attempts } };
  return null;
}

/** A fault's message and what to do about it, as `kforge eval` prints one for a single candidate. */
function withHint(error: UnevaluatedLine['error']): string {
  return error.hint ? `${error.message}; ${error.hint}` : error.message;
}

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** One line of the human listing: the verdict, the speed-up, the two files. */
function humanLine(result: EvaluationResult, note = ''): string {
  const speedup = result.timing ? ` ${formatSpeedup(result.timing.speedup_vs_best)} vs best` : '';
  const measuring = measuringPolicy(result);
  const reason =
    result.verdict === 'correct' ? '' : ` — ${result.reasons[0]?.message ?? ''}${measuring ? ` (to measure it as it is: --guard-policy ${measuring})` : ''}`;
  return `${result.verdict.padEnd(13)}${speedup}  ${formatProblemName(result.problem)}  ${path.basename(result.candidate)}${note}${reason}\n`;
}

/**
 * Evaluates every pair through one evaluator (a PipelinedEvaluator builds them in parallel and
 * leases the device to one at a time) and prints one line per candidate as it finishes: with
 * `json`, the result object of docs/spec.md section 6 (or, with no verdict, `{problem, candidate,
 * error}`); else a human line. A machine or kforge fault is tried again `retries` times before the
 * candidate is reported as not evaluated. Returns the summary; see {@link batchExitCode}.
 */
export async function runBatch(options: BatchRunOptions): Promise<BatchSummary> {
  return new BatchRun(options).run();
}

/** One batch's progress: what it has printed and counted so far (see {@link runBatch}). */
class BatchRun {
  private readonly startedAt = performance.now();
  private readonly results: EvaluationResult[] = [];
  private readonly missing: UnevaluatedLine[] = [];
  private readonly retries: number;
  private deviceMs = 0;
  private builds = 0;
  /** The pairs still to evaluate (after `--resume` took what it holds). */
  private total = 0;
  /** Each pair's `--resume` key, where there is a journal. */
  private readonly keys = new Map<EvaluationPair, string>();

  constructor(private readonly options: BatchRunOptions) {
    this.retries = options.retries ?? 2;
  }

  async run(): Promise<BatchSummary> {
    const toEvaluate = await this.takeKept();
    const resumed = this.results.length;
    this.total = toEvaluate.length;
    await Promise.all(toEvaluate.map((pair) => this.evaluateOne(pair)));
    return { results: this.results, unevaluated: this.missing, wallMs: performance.now() - this.startedAt, deviceMs: this.deviceMs, resumed };
  }

  /** With `--resume`, prints the candidates its file holds a verdict for as kept; returns the others, to evaluate. */
  private async takeKept(): Promise<EvaluationPair[]> {
    const { journal, stdout } = this.options;
    const toEvaluate: EvaluationPair[] = [];
    for (const pair of this.options.pairs) {
      const key = journal ? await resumeKey(pair, this.options.requestOf(pair)) : null;
      const kept = key === null ? null : journal!.taken(key);
      if (key !== null) this.keys.set(pair, key);
      if (!kept) {
        toEvaluate.push(pair);
        continue;
      }
      this.results.push(kept);
      stdout.write(this.options.json ? `${JSON.stringify(kept)}\n` : humanLine(kept, ` (kept in ${path.basename(journal!.path)})`));
    }
    return toEvaluate;
  }

  private async keep(key: string | null, line: object, candidatePath: string): Promise<void> {
    const { journal } = this.options;
    if (!journal || key === null) return;
    await journal
      .record(key, line)
      .catch((error: unknown) =>
        this.options.stderr.write(
          `kforge eval: ${path.basename(candidatePath)}: could not keep its result in ${journal.path} (${(error as Error).message}); a later --resume run evaluates it again\n`,
        ),
      );
  }

  private async evaluateOne(pair: EvaluationPair): Promise<void> {
    const { options } = this;
    const key = this.keys.get(pair) ?? null;
    const onPipelineEvent = this.buildReporter(pair);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const evaluateOptions: EvaluateOptions = {
          ...options.evaluateOptions,
          onPipelineEvent,
          ...(options.signal ? { signal: options.signal } : {}),
        };
        const { result, usage } = await options.evaluator.evaluate(options.requestOf(pair), evaluateOptions);
        this.results.push(result);
        this.deviceMs += usage.heldMs;
        options.stdout.write(options.json ? `${JSON.stringify(result)}\n` : humanLine(result));
        await this.keep(key, result, pair.candidatePath);
        return;
      } catch (error) {
        if (!(await this.retryAfter(pair, key, error, attempt))) return;
      }
    }
  }

  /**
   * A line per finished build on stderr: a batch at KernelBench's sizes builds for minutes before
   * its first verdict, and should say it is alive. The pair's first build only: a problem folder's
   * later shapes, and a retry, reuse that build.
   */
  private buildReporter(pair: EvaluationPair): EvaluateOptions['onPipelineEvent'] {
    let buildReported = false;
    return (event) => {
      this.options.evaluateOptions?.onPipelineEvent?.(event);
      if (event.kind !== 'build-finished' || buildReported) return;
      buildReported = true;
      this.builds += 1;
      const how = !event.built
        ? 'did not build'
        : event.cacheHit
          ? 'built (cached)'
          : `built${event.durationMs !== null ? ` in ${formatDuration(event.durationMs)}` : ''}`;
      this.options.stderr.write(`kforge eval: ${path.basename(pair.candidatePath)} ${how} (${this.builds} of ${this.total} builds done)\n`);
    };
  }

  /**
   * After a failed attempt: true to try again (after a pause); false once the candidate is reported
   * as not evaluated. Rethrows a cancellation and anything that is not a machine or kforge fault.
   */
  private async retryAfter(pair: EvaluationPair, key: string | null, error: unknown, attempt: number): Promise<boolean> {
    const { options, retries } = this;
    if (error instanceof EvaluationCancelledError) throw error;
    const line = unevaluated(pair, error, attempt);
    if (!line) throw error;
    // Too large, or too slow for the reference stage's limit (a pace the worker measured): the
    // same sizes would only fail again, and the message says which sizes would not.
    const repeats = error instanceof ProblemTooLargeError || (error instanceof MachineFaultError && !error.isRetryable);
    const retryable = !repeats && attempt <= retries && !options.signal?.aborted;
    if (retryable) {
      options.stderr.write(`kforge eval: ${path.basename(pair.candidatePath)}: ${withHint(line.error)}; trying again (${attempt} of ${retries})\n`);
      await pause(options.retryDelayMs ?? 5000, options.signal);
      return true;
    }
    this.missing.push(line);
    options.stdout.write(
      options.json
        ? `${JSON.stringify(line)}\n`
        : `${'not evaluated'.padEnd(13)}  ${formatProblemName(pair.problemPath)}  ${path.basename(pair.candidatePath)} — ${withHint(line.error)}\n`,
    );
    await this.keep(key, line, pair.candidatePath);
    return false;
  }
}

/**
 * The exit status of a batch: 0 when every candidate got a verdict and all are `correct`; 1 when
 * every candidate got a verdict and some are not correct; 2 when the machine could not evaluate
 * some (or a problem is too large for it); 3 when kforge itself failed on some.
 */
export function batchExitCode(summary: BatchSummary): number {
  if (summary.unevaluated.some((line) => line.error.kind === 'kforge_fault')) return EXIT.internal;
  if (summary.unevaluated.length > 0) return EXIT.usage;
  return summary.results.every((result) => result.verdict === 'correct') ? EXIT.correct : EXIT.notCorrect;
}

/** The summary line on stderr: verdict counts, those without a verdict, wall time, candidates per hour. */
export function formatBatchSummary(summary: BatchSummary): string {
  const counts = new Map<Verdict, number>();
  for (const result of summary.results) counts.set(result.verdict, (counts.get(result.verdict) ?? 0) + 1);
  const verdicts = [...counts.entries()].map(([verdict, count]) => `${count} ${verdict}`).join(', ') || 'no verdicts';
  const total = summary.results.length + summary.unevaluated.length;
  const evaluated = summary.results.length - summary.resumed;
  const perHour = summary.wallMs > 0 ? (evaluated / summary.wallMs) * 3_600_000 : 0;
  const device = `, the device held ${formatDuration(summary.deviceMs)}`;
  const missing = summary.unevaluated.length > 0 ? `; ${summary.unevaluated.length} not evaluated (no verdict: the machine or kforge failed)` : '';
  const kept = summary.resumed > 0 ? `; ${summary.resumed} kept from an earlier run (--resume), ${evaluated} evaluated in this one` : '';
  const rate = evaluated > 0 || summary.resumed === 0 ? `, ${perHour.toFixed(0)} candidates per hour` : '';
  return `kforge eval: ${total} candidates: ${verdicts}${missing}${kept}; ${formatDuration(summary.wallMs)} in all${device}${rate}\n`;
}
