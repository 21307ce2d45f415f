import { z } from 'zod';
import type { EvaluationResult, Verdict } from '../core/verdict.js';

/**
 * The records a {@link RunStore} keeps. Times are ISO-8601 UTC strings taken from the store's
 * injected clock; ids are integers assigned by the store, except run ids (short strings a person
 * types) and problem hashes (sha256 of the problem file's content, lower-case hex).
 */

/** Where a run stands. `running` is also what a run killed with `kill -9` is left as. */
export const RUN_STATUSES = ['running', 'stopped', 'paused', 'finished', 'failed'] as const;
export const runStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof runStatusSchema>;

/** Who wrote a candidate: the model, a file the user gave (`--candidate`), or a person editing one. */
export const CANDIDATE_ORIGINS = ['model', 'files', 'human'] as const;
export const candidateOriginSchema = z.enum(CANDIDATE_ORIGINS);
export type CandidateOrigin = z.infer<typeof candidateOriginSchema>;

/** An idea's standing in the `ideas` strategy: a person may pin it (keep exploring) or drop it. */
export const IDEA_STATUSES = ['active', 'pinned', 'dropped'] as const;
export const ideaStatusSchema = z.enum(IDEA_STATUSES);
export type IdeaStatus = z.infer<typeof ideaStatusSchema>;

/**
 * What a person did to a run from the dashboard or the CLI. `edit-candidate` records that a
 * person added an edited candidate (origin `human`) as the child of another.
 */
export const ACTION_TYPES = ['hint', 'pin-idea', 'drop-idea', 'accept', 'stop', 'resume', 'edit-candidate'] as const;
export const actionTypeSchema = z.enum(ACTION_TYPES);
export type ActionType = z.infer<typeof actionTypeSchema>;

/**
 * A JSON object (run configuration, event payload): JSON values only, so what is stored is what
 * is read back. `undefined`, `NaN`, `Infinity`, dates and bigints are refused; leave a key out or
 * use null instead.
 */
export const jsonObjectSchema = z.record(z.string(), z.json());
export type JsonObject = z.infer<typeof jsonObjectSchema>;

/** One chat message of a prompt, as sent to the model (AI SDK `ModelMessage`-compatible). */
export const chatMessageSchema = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;
export const chatMessagesSchema = z.array(chatMessageSchema);

/** Event types are noun-verb in kebab case: `candidate-evaluated`, `problem-stalled`. */
export const eventTypeSchema = z.string().regex(/^[a-z]+(?:-[a-z]+)+$/, 'expected a noun-verb event type such as `candidate-evaluated`');

export interface Run {
  id: string;
  status: RunStatus;
  /** Search strategy (`refine`, `sample`, `ideas`). */
  strategy: string;
  /** Model identifier as the user gave it (`anthropic:claude-sonnet-4-5`). */
  model: string;
  /** The run's full options, so `--resume` can continue with the same settings. */
  config: JsonObject;
  /** Problems of the run, in the order they were given. */
  problemHashes: string[];
  /** Why the run failed (status `failed`), else null. */
  error: string | null;
  startedAt: string;
  /** Last write that touched the run; a `running` run whose last activity is old has likely died. */
  updatedAt: string;
  /** When the run reached `finished` or `failed`, else null. */
  finishedAt: string | null;
}

export interface ProblemRecord {
  /** sha256 of the problem file's content, lower-case hex. */
  hash: string;
  /** Name first seen for this content (file stem, `19_ReLU`). */
  name: string;
  source: string;
  /** Path first seen for this content, as the user gave it; null when it came from elsewhere. */
  path: string | null;
  createdAt: string;
}

export interface ModelCall {
  id: number;
  runId: string;
  problemHash: string | null;
  round: number | null;
  model: string;
  /** The prompt, as chat messages. */
  messages: ChatMessage[];
  replyText: string | null;
  reasoningText: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  latencyMs: number | null;
  /** Price of the call in US dollars; null when the model's price is unknown. */
  costUsd: number | null;
  /** Why the call failed, else null. */
  error: string | null;
  createdAt: string;
}

export interface Candidate {
  id: number;
  runId: string;
  problemHash: string;
  /** The candidate this one refines; null for a root. */
  parentId: number | null;
  /** Search round, 0 for the first. */
  round: number;
  ideaId: number | null;
  /** The idea's label when the candidate was made (kept when the idea is deleted). */
  ideaLabel: string | null;
  source: string;
  /** sha256 of `source`, lower-case hex. */
  sourceHash: string;
  origin: CandidateOrigin;
  modelCallId: number | null;
  createdAt: string;
}

export interface Evaluation {
  id: number;
  candidateId: number;
  runId: string;
  problemHash: string;
  /** The evaluator's full result (docs/spec.md section 6). */
  result: EvaluationResult;
  /** Copied from `result.verdict`. */
  verdict: Verdict;
  /** Copied from `result.timing`; null where there is no timing (any verdict but `correct`). */
  speedupVsEager: number | null;
  speedupVsCompile: number | null;
  speedupVsBest: number | null;
  candidateMedianMs: number | null;
  /** Device time this evaluation used, in seconds; 0 when the result was reused from the cache. */
  gpuSeconds: number;
  /** Hash of the evaluation options (backend, precision, tolerance, trials, device). */
  optionsHash: string;
  /** Hash of (candidate source, problem, options): equal keys mean the same evaluation. */
  cacheKey: string;
  /** The evaluation this result was copied from, when reused by cache key; else null. */
  reusedFromEvaluationId: number | null;
  createdAt: string;
}

/** A candidate with its evaluation (undefined until it has been evaluated). */
export interface CandidateWithEvaluation extends Candidate {
  evaluation: Evaluation | undefined;
}

export interface Idea {
  id: number;
  runId: string;
  problemHash: string;
  round: number;
  /** Short name shown in the candidate tree (`smem-tiling`). */
  label: string;
  text: string;
  status: IdeaStatus;
  createdAt: string;
  updatedAt: string;
}

export interface RunEvent {
  /** Increasing in commit order: a reader that has seen id N never later sees a new event below N. */
  id: number;
  runId: string;
  problemHash: string | null;
  type: string;
  payload: JsonObject;
  createdAt: string;
}

export interface Action {
  /** Increasing in commit order, like {@link RunEvent.id}. */
  id: number;
  runId: string;
  /** The problem acted on; null for run-wide actions (stop, resume, a hint for every problem). */
  problemHash: string | null;
  type: ActionType;
  candidateId: number | null;
  ideaId: number | null;
  /** A hint's text, or the note a person left with an accepted kernel. */
  note: string | null;
  createdAt: string;
}

/** What a run reached on one problem. Counts are of candidates; speedups are of the best one. */
export interface ProblemSummary {
  problemHash: string;
  name: string;
  candidates: number;
  evaluated: number;
  correct: number;
  /** `correct / evaluated`, null before any evaluation. */
  correctShare: number | null;
  /** The furthest verdict reached (`correct` first, then {@link VERDICT_RANK} order). */
  bestVerdict: Verdict | null;
  /** The correct candidate with the highest speedup over the best baseline. */
  bestCandidateId: number | null;
  bestSpeedupVsEager: number | null;
  bestSpeedupVsCompile: number | null;
  bestSpeedupVsBest: number | null;
  bestCandidateMedianMs: number | null;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Null when no call of this problem had a known price. */
  costUsd: number | null;
  gpuSeconds: number;
  events: number;
}

export interface RunTotals {
  problems: number;
  /** Problems with at least one correct candidate. */
  problemsSolved: number;
  candidates: number;
  evaluated: number;
  correct: number;
  correctShare: number | null;
  /** Highest per-problem best speedup over the best baseline. */
  bestSpeedupVsBest: number | null;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  gpuSeconds: number;
  events: number;
}

export interface RunSummary extends Run {
  problems: ProblemSummary[];
  totals: RunTotals;
}

/**
 * Verdicts from furthest to least far along the pipeline: a candidate that ran and differed got
 * further than one that did not build. Used to pick a problem's best verdict.
 */
export const VERDICT_RANK: readonly Verdict[] = ['correct', 'incorrect', 'rejected', 'runtime_error', 'timeout', 'crashed', 'compile_error', 'invalid_input'];
