import type { z } from 'zod';
import type { RunStore, RunSummary } from '../../store/run-store.js';
import type { runListItemSchema, runProblemSchema } from '../api-schemas/run-schemas.js';
import { acceptedCandidates } from './accepted-candidates.js';
import { problemLevel } from './problem-level.js';
import { readRunPlan } from './run-plan.js';

export type RunListItem = z.infer<typeof runListItemSchema>;
export type RunProblem = z.infer<typeof runProblemSchema>;

/** Events that mark a run (re)starting; a stop recorded before the latest of them is spent. */
const START_EVENTS = ['run-created', 'run-resumed'];

/**
 * Whether a `stop` was recorded that the run has not acknowledged yet: the run is still
 * `running` and no start event came after the stop's `action-recorded` event.
 */
export async function isStopPending(store: RunStore, summary: Pick<RunSummary, 'id' | 'status'>): Promise<boolean> {
  if (summary.status !== 'running') return false;
  const stops = await store.listActions(summary.id, { types: ['stop'] });
  const lastStop = stops.at(-1);
  if (!lastStop) return false;
  const events = await store.listEvents(summary.id, { types: ['action-recorded', ...START_EVENTS] });
  const stopEvent = events.findLast((event) => event.type === 'action-recorded' && event.payload.actionId === lastStop.id);
  const startEvent = events.findLast((event) => START_EVENTS.includes(event.type));
  return stopEvent !== undefined && (startEvent === undefined || stopEvent.id > startEvent.id);
}

/** A run summary as the API lists it: problems with their level and accepted kernel, no config. */
export async function toRunListItem(store: RunStore, summary: RunSummary): Promise<RunListItem> {
  const records = new Map((await store.listRunProblems(summary.id)).map((record) => [record.hash, record]));
  const accepted = acceptedCandidates(await store.listActions(summary.id, { types: ['accept'] }));
  const plan = readRunPlan(summary);
  const problems: RunProblem[] = summary.problems.map((problem) => {
    const record = records.get(problem.problemHash);
    return {
      ...problem,
      level: problemLevel({ path: record?.path ?? null, name: problem.name }),
      path: record?.path ?? null,
      acceptedCandidateId: accepted.get(problem.problemHash)?.candidateId ?? null,
    };
  });
  return {
    id: summary.id,
    status: summary.status,
    strategy: summary.strategy,
    model: summary.model,
    backend: plan?.evaluation.backend ?? null,
    precision: plan?.evaluation.precision ?? null,
    error: summary.error,
    startedAt: summary.startedAt,
    updatedAt: summary.updatedAt,
    finishedAt: summary.finishedAt,
    problems,
    totals: summary.totals,
    stopPending: await isStopPending(store, summary),
  };
}
