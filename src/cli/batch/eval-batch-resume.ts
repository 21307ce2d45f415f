import { createHash } from 'node:crypto';
import { appendFile, readFile } from 'node:fs/promises';
import { canonicalJson } from '../../core/canonical-json.js';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import type { EvaluationPair } from './eval-batch-inputs.js';
import { UsageError } from '../io/usage-error.js';

/**
 * `kforge eval … --resume FILE` (docs/batch.md): every finished candidate's line is appended to
 * FILE with the key of what was evaluated, and a later run of the same command takes from FILE the
 * verdict of any candidate whose key it holds, evaluating only the rest. A batch stopped part-way
 * (interrupted, out of time, the machine lost) is finished by running the command again.
 *
 * The key covers what can change a verdict or a figure: the problem's and the candidate's bytes
 * and paths, and every setting of the request except how long to wait for the device. A line
 * without a verdict (the machine or kforge failed) is kept in FILE but never taken: that candidate
 * is evaluated again.
 */
export interface ResumeJournal {
  readonly path: string;
  /** The verdict FILE holds for this key, or null. */
  taken(key: string): EvaluationResult | null;
  /** Lines of FILE that could not be read (a run killed while writing one), left as they are. */
  readonly unreadableLines: number;
  /** Appends one finished candidate's line with its key. */
  record(key: string, line: object): Promise<void>;
}

/** What is evaluated, as text for the key: the request less its wait for the device. */
function requestText(request: EvaluationRequest): string {
  const { deviceWaitMs: _wait, ...rest } = request;
  return canonicalJson(rest);
}

/** The key of one pair's evaluation under `request` (see {@link ResumeJournal}). */
export async function resumeKey(pair: EvaluationPair, request: EvaluationRequest): Promise<string> {
  const hash = createHash('sha256');
  for (const part of [requestText(request), await readFile(pair.problemPath), await readFile(pair.candidatePath)]) {
    hash.update(String(part.length)).update(':').update(part);
  }
  return hash.digest('hex');
}

/** Reads FILE (absent: nothing done yet) and opens it for appending. */
export async function openResumeJournal(file: string): Promise<ResumeJournal> {
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new UsageError(`--resume: \`${file}\` is a folder; name the file of results to keep`);
    if (code !== 'ENOENT') throw new UsageError(`--resume: \`${file}\` cannot be read: ${(error as Error).message}`);
  }
  const done = new Map<string, EvaluationResult>();
  let unreadableLines = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      unreadableLines += 1;
      continue;
    }
    const key = (parsed as { resume_key?: unknown } | null)?.resume_key;
    if (typeof key !== 'string') {
      unreadableLines += 1;
      continue;
    }
    const { resume_key: _key, ...fields } = parsed as Record<string, unknown>;
    if (!('verdict' in fields)) continue;
    const result = evaluationResultSchema.safeParse(fields);
    if (result.success) done.set(key, result.data);
    else unreadableLines += 1;
  }
  // A line cut short by a killed run must not swallow the next one.
  let separator = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
  let writing: Promise<void> = Promise.resolve();
  return {
    path: file,
    unreadableLines,
    taken: (key) => done.get(key) ?? null,
    record: (key, line) => {
      const entry = `${separator}${JSON.stringify({ resume_key: key, ...line })}\n`;
      separator = '';
      // One line at a time, in the order they finish: appends of concurrent evaluations never interleave.
      const appended = writing.then(() => appendFile(file, entry));
      writing = appended.catch(() => undefined);
      return appended;
    },
  };
}
