import type { Selectable } from 'kysely';
import type { z } from 'zod';
import { evaluationResultSchema, verdictSchema } from '../../core/verdict.js';
import { StoreDataError } from '../errors/store-data-error.js';
import type {
  ActionsTable,
  CandidatesTable,
  EvaluationsTable,
  EventsTable,
  IdeasTable,
  ModelCallsTable,
  ProblemsTable,
  RunsTable,
} from './sqlite-database-schema.js';
import {
  actionTypeSchema,
  candidateOriginSchema,
  chatMessagesSchema,
  ideaStatusSchema,
  jsonObjectSchema,
  runStatusSchema,
  type Action,
  type Candidate,
  type Evaluation,
  type Idea,
  type ModelCall,
  type ProblemRecord,
  type Run,
  type RunEvent,
} from '../store-records.js';

/** Turns SQLite rows into records, validating every JSON and enum column with zod. */

interface ColumnLocation {
  table: string;
  column: string;
  rowId: string | number;
}

function checked<Schema extends z.ZodType>(schema: Schema, value: unknown, location: ColumnLocation): z.infer<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new StoreDataError(location, { cause: parsed.error });
  return parsed.data;
}

function checkedJson<Schema extends z.ZodType>(schema: Schema, text: string, location: ColumnLocation): z.infer<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StoreDataError(location, { cause: error });
  }
  return checked(schema, value, location);
}

export function toRun(row: Selectable<RunsTable>, problemHashes: string[]): Run {
  const at = (column: string): ColumnLocation => ({ table: 'runs', column, rowId: row.id });
  return {
    id: row.id,
    status: checked(runStatusSchema, row.status, at('status')),
    strategy: row.strategy,
    model: row.model,
    config: checkedJson(jsonObjectSchema, row.config_json, at('config_json')),
    problemHashes,
    error: row.error,
    startedAt: row.started_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

export function toProblem(row: Selectable<ProblemsTable>): ProblemRecord {
  return { hash: row.hash, name: row.name, source: row.source, path: row.path, createdAt: row.created_at };
}

export function toModelCall(row: Selectable<ModelCallsTable>): ModelCall {
  return {
    id: row.id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    round: row.round,
    model: row.model,
    messages: checkedJson(chatMessagesSchema, row.messages_json, { table: 'model_calls', column: 'messages_json', rowId: row.id }),
    replyText: row.reply_text,
    reasoningText: row.reasoning_text,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    latencyMs: row.latency_ms,
    costUsd: row.cost_usd,
    error: row.error,
    createdAt: row.created_at,
  };
}

export function toCandidate(row: Selectable<CandidatesTable>): Candidate {
  return {
    id: row.id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    parentId: row.parent_id,
    round: row.round,
    ideaId: row.idea_id,
    ideaLabel: row.idea_label,
    source: row.source,
    sourceHash: row.source_hash,
    origin: checked(candidateOriginSchema, row.origin, { table: 'candidates', column: 'origin', rowId: row.id }),
    modelCallId: row.model_call_id,
    createdAt: row.created_at,
  };
}

export function toEvaluation(row: Selectable<EvaluationsTable>): Evaluation {
  const at = (column: string): ColumnLocation => ({ table: 'evaluations', column, rowId: row.id });
  return {
    id: row.id,
    candidateId: row.candidate_id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    result: checkedJson(evaluationResultSchema, row.result_json, at('result_json')),
    verdict: checked(verdictSchema, row.verdict, at('verdict')),
    speedupVsEager: row.speedup_vs_eager,
    speedupVsCompile: row.speedup_vs_compile,
    speedupVsBest: row.speedup_vs_best,
    candidateMedianMs: row.candidate_median_ms,
    gpuSeconds: row.gpu_seconds,
    optionsHash: row.options_hash,
    cacheKey: row.cache_key,
    reusedFromEvaluationId: row.reused_from_evaluation_id,
    createdAt: row.created_at,
  };
}

export function toIdea(row: Selectable<IdeasTable>): Idea {
  return {
    id: row.id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    round: row.round,
    label: row.label,
    text: row.text,
    status: checked(ideaStatusSchema, row.status, { table: 'ideas', column: 'status', rowId: row.id }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toRunEvent(row: Selectable<EventsTable>): RunEvent {
  return {
    id: row.id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    type: row.type,
    payload: checkedJson(jsonObjectSchema, row.payload_json, { table: 'events', column: 'payload_json', rowId: row.id }),
    createdAt: row.created_at,
  };
}

export function toAction(row: Selectable<ActionsTable>): Action {
  return {
    id: row.id,
    runId: row.run_id,
    problemHash: row.problem_hash,
    type: checked(actionTypeSchema, row.type, { table: 'actions', column: 'type', rowId: row.id }),
    candidateId: row.candidate_id,
    ideaId: row.idea_id,
    note: row.note,
    createdAt: row.created_at,
  };
}
