import { z } from 'zod';
import type { EvaluationResult } from '../../../core/verdict.js';
import { STRATEGY_NAMES } from './strategy-names.js';

export { STRATEGY_NAMES } from './strategy-names.js';

export const strategyNameSchema = z.enum(STRATEGY_NAMES);
export type StrategyName = z.infer<typeof strategyNameSchema>;

/** An optimisation idea in plain language, as the ideas strategy stores it. */
export interface IdeaRef {
  /** The store's id of the idea. */
  id: number;
  /** Short name (`omp-blocked-rows`). */
  label: string;
  /** The idea in a sentence or two. */
  text: string;
}

/** Where a candidate came from: its round, the candidate it was derived from, the idea it implements. */
export interface Lineage {
  /** Round of the search, from 0 (refine: the turn; sample: 0; ideas: the ideas round). */
  round: number;
  /** The candidate this one was derived from (its source was shown to the model), or null. */
  parentCandidateId: number | null;
  /** The optimisation idea this candidate implements (ideas strategy), or null. */
  idea: IdeaRef | null;
}

/** A candidate kernel file as stored: its source, where it lies on disk and its lineage. */
export interface CandidateRecord {
  /** The store's id of the candidate. */
  id: number;
  /** The complete Python file (defines `ModelNew`). */
  source: string;
  /** Absolute path of the file the evaluator reads. */
  path: string;
  lineage: Lineage;
  /** The model call whose reply held this candidate. */
  modelCallId: number | null;
}

/** A candidate the evaluator has judged. `deviceMs` is how long it held the device queue. */
export interface EvaluatedAttempt {
  kind: 'evaluated';
  lineage: Lineage;
  candidate: CandidateRecord;
  result: EvaluationResult;
  deviceMs: number;
}

/** A reply that held no usable code: recorded and fed back to the next turn. */
export interface NoCodeAttempt {
  kind: 'no-code';
  lineage: Lineage;
  modelCallId: number;
  /** Why no candidate could be taken from the reply, in a sentence for the model. */
  reason: string;
}

/** A model call that failed (provider error, timeout): nothing to evaluate. */
export interface ModelFailedAttempt {
  kind: 'model-failed';
  lineage: Lineage;
  message: string;
}

/** One step of the search for one problem, in the order it was asked for. */
export type Attempt = EvaluatedAttempt | NoCodeAttempt | ModelFailedAttempt;
