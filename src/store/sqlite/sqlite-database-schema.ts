import type { Generated } from 'kysely';

/**
 * Kysely's view of the SQLite tables, as created by `migrations/`. Column names are snake case;
 * `*_json` columns hold JSON text that is validated with zod when read; times are ISO-8601 text.
 */
export interface StoreDatabase {
  runs: RunsTable;
  problems: ProblemsTable;
  run_problems: RunProblemsTable;
  model_calls: ModelCallsTable;
  ideas: IdeasTable;
  candidates: CandidatesTable;
  evaluations: EvaluationsTable;
  events: EventsTable;
  actions: ActionsTable;
}

export interface RunsTable {
  id: string;
  status: string;
  strategy: string;
  model: string;
  config_json: string;
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface ProblemsTable {
  hash: string;
  name: string;
  source: string;
  path: string | null;
  created_at: string;
}

export interface RunProblemsTable {
  run_id: string;
  problem_hash: string;
  position: number;
}

export interface ModelCallsTable {
  id: Generated<number>;
  run_id: string;
  problem_hash: string | null;
  round: number | null;
  model: string;
  messages_json: string;
  reply_text: string | null;
  reasoning_text: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  latency_ms: number | null;
  cost_usd: number | null;
  error: string | null;
  created_at: string;
}

export interface IdeasTable {
  id: Generated<number>;
  run_id: string;
  problem_hash: string;
  round: number;
  label: string;
  text: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface CandidatesTable {
  id: Generated<number>;
  run_id: string;
  problem_hash: string;
  parent_id: number | null;
  round: number;
  idea_id: number | null;
  idea_label: string | null;
  source: string;
  source_hash: string;
  origin: string;
  model_call_id: number | null;
  created_at: string;
}

export interface EvaluationsTable {
  id: Generated<number>;
  candidate_id: number;
  run_id: string;
  problem_hash: string;
  result_json: string;
  verdict: string;
  speedup_vs_eager: number | null;
  speedup_vs_compile: number | null;
  speedup_vs_best: number | null;
  candidate_median_ms: number | null;
  gpu_seconds: number;
  options_hash: string;
  cache_key: string;
  reused_from_evaluation_id: number | null;
  created_at: string;
}

export interface EventsTable {
  id: Generated<number>;
  run_id: string;
  problem_hash: string | null;
  type: string;
  payload_json: string;
  created_at: string;
}

export interface ActionsTable {
  id: Generated<number>;
  run_id: string;
  problem_hash: string | null;
  type: string;
  candidate_id: number | null;
  idea_id: number | null;
  note: string | null;
  created_at: string;
}
