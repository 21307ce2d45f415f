import type { EvaluationResult } from '../core/verdict.js';
import type {
  Action,
  ActionType,
  Candidate,
  CandidateOrigin,
  CandidateWithEvaluation,
  ChatMessage,
  Evaluation,
  Idea,
  IdeaStatus,
  JsonObject,
  ModelCall,
  ProblemRecord,
  Run,
  RunEvent,
  RunStatus,
  RunSummary,
} from './store-records.js';

export * from './store-records.js';

export interface CreateRunInput {
  /** Chosen by the store (`20261202-143005-a1b2`) when left out. */
  id?: string;
  strategy: string;
  model: string;
  config: JsonObject;
  /** Problems already stored with {@link RunStore.upsertProblem}, in order; no duplicates. */
  problemHashes: string[];
}

export interface UpsertProblemInput {
  name: string;
  source: string;
  path?: string | null;
}

export interface RecordModelCallInput {
  runId: string;
  problemHash?: string | null;
  round?: number | null;
  model: string;
  messages: ChatMessage[];
  replyText?: string | null;
  reasoningText?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  latencyMs?: number | null;
  costUsd?: number | null;
  error?: string | null;
}

export interface AddCandidateInput {
  runId: string;
  /** Must be one of the run's problems. */
  problemHash: string;
  /** Must be a candidate of the same run and problem. */
  parentId?: number | null;
  round: number;
  /** Must be an idea of the same run and problem; its label is copied onto the candidate. */
  ideaId?: number | null;
  source: string;
  origin: CandidateOrigin;
  modelCallId?: number | null;
}

export interface RecordEvaluationInput {
  candidateId: number;
  result: EvaluationResult;
  /** Device time used, in seconds; 0 when reused. */
  gpuSeconds: number;
  optionsHash: string;
  /** See `evaluationCacheKey` in `content-hash.ts`. */
  cacheKey: string;
  reusedFromEvaluationId?: number | null;
}

export interface RecordEvaluationOutcome {
  evaluation: Evaluation;
  /** False when the candidate already had an evaluation: that one is returned, nothing is written. */
  created: boolean;
}

export interface AddIdeaInput {
  runId: string;
  problemHash: string;
  round: number;
  label: string;
  text: string;
  status?: IdeaStatus;
}

export interface UpdateIdeaInput {
  label?: string;
  text?: string;
  status?: IdeaStatus;
}

export interface RecordEventInput {
  runId: string;
  problemHash?: string | null;
  /** Noun-verb: `problem-stalled`, `round-started`. */
  type: string;
  payload?: JsonObject;
}

/**
 * A person's action. Required fields by type: `hint` needs `note`; `pin-idea` and `drop-idea`
 * need `ideaId` (and set the idea's status in the same transaction); `accept` and
 * `edit-candidate` need `candidateId`. The problem is taken from the idea or candidate.
 */
export interface RecordActionInput {
  runId: string;
  type: ActionType;
  problemHash?: string | null;
  candidateId?: number | null;
  ideaId?: number | null;
  note?: string | null;
}

export interface ListRunsOptions {
  status?: RunStatus;
  /** Most recent runs first; all when left out. */
  limit?: number;
}

export interface ListCandidatesOptions {
  problemHash?: string;
  round?: number;
}

export interface ListIdeasOptions {
  problemHash?: string;
  status?: IdeaStatus;
}

export interface ListEventsOptions {
  /** Only events with a greater id: pass the last id seen to poll for new ones. */
  afterId?: number;
  problemHash?: string;
  types?: string[];
  limit?: number;
}

export interface ListActionsOptions {
  afterId?: number;
  problemHash?: string;
  types?: ActionType[];
}

/**
 * Everything a run leaves behind, behind one interface so the search, the CLI and the dashboard
 * never talk to a database directly. Every write is atomic: it lands whole or not at all, so a
 * process killed at any instant leaves a store that `pendingWork` can resume from.
 *
 * The store writes these events itself, in the same transaction as the change they report:
 * `run-created`, `run-<status>` (`run-stopped`, `run-finished`, …; `run-resumed` for
 * `running`), `candidate-added`, `candidate-evaluated` and `action-recorded`. Everything else
 * (`problem-stalled`, `round-started`) is the caller's, through {@link RunStore.recordEvent}.
 *
 * Referring to a run, problem, candidate or idea that does not exist (or belongs to another
 * run) throws `StoreReferenceError`; malformed input throws `StoreValidationError`.
 */
export interface RunStore {
  /** Where the store lives (a file path for SQLite), for messages. */
  readonly location: string;

  createRun(input: CreateRunInput): Promise<Run>;
  getRun(runId: string): Promise<Run | undefined>;
  /** Runs with their summaries, most recently started first. */
  listRuns(options?: ListRunsOptions): Promise<RunSummary[]>;
  getRunSummary(runId: string): Promise<RunSummary | undefined>;
  /** Sets the status; `finished` and `failed` also set `finishedAt`. */
  updateRunStatus(runId: string, status: RunStatus, options?: { error?: string | null }): Promise<Run>;

  /** Stores a problem by content hash; storing the same content again returns the first record. */
  upsertProblem(input: UpsertProblemInput): Promise<ProblemRecord>;
  getProblem(hash: string): Promise<ProblemRecord | undefined>;
  /** The run's problems in run order. */
  listRunProblems(runId: string): Promise<ProblemRecord[]>;

  recordModelCall(input: RecordModelCallInput): Promise<ModelCall>;
  getModelCall(id: number): Promise<ModelCall | undefined>;
  listModelCalls(runId: string, options?: { problemHash?: string }): Promise<ModelCall[]>;

  addCandidate(input: AddCandidateInput): Promise<Candidate>;
  getCandidate(id: number): Promise<CandidateWithEvaluation | undefined>;
  /** In creation order, each with its evaluation. */
  listCandidates(runId: string, options?: ListCandidatesOptions): Promise<CandidateWithEvaluation[]>;
  /** The chain from the root down to the candidate itself; empty for an unknown id. */
  candidateLineage(candidateId: number): Promise<Candidate[]>;
  /** Candidates of the run that have no evaluation yet, in creation order: what a resume evaluates. */
  pendingWork(runId: string): Promise<Candidate[]>;

  /**
   * Stores a candidate's evaluation. Idempotent by candidate: recording a second time stores
   * nothing and returns the first evaluation with `created: false`.
   */
  recordEvaluation(input: RecordEvaluationInput): Promise<RecordEvaluationOutcome>;
  /** The first evaluation stored under this cache key, in any run. */
  findEvaluationByCacheKey(cacheKey: string): Promise<Evaluation | undefined>;

  addIdea(input: AddIdeaInput): Promise<Idea>;
  getIdea(id: number): Promise<Idea | undefined>;
  listIdeas(runId: string, options?: ListIdeasOptions): Promise<Idea[]>;
  updateIdea(id: number, changes: UpdateIdeaInput): Promise<Idea>;
  /** Candidates made from the idea keep their `ideaLabel`; their `ideaId` becomes null. */
  deleteIdea(id: number): Promise<void>;

  recordEvent(input: RecordEventInput): Promise<RunEvent>;
  /** In id order. */
  listEvents(runId: string, options?: ListEventsOptions): Promise<RunEvent[]>;

  recordAction(input: RecordActionInput): Promise<Action>;
  /** In id order. */
  listActions(runId: string, options?: ListActionsOptions): Promise<Action[]>;
  /** Hints for the problem and run-wide hints, oldest first. */
  listHints(runId: string, problemHash: string): Promise<Action[]>;

  close(): Promise<void>;
}
