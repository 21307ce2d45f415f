import type { Action } from '../../store/run-store.js';

/** A problem's accepted kernel: the candidate of its latest `accept` action. */
export interface Acceptance {
  candidateId: number;
  note: string | null;
  createdAt: string;
}

/** The accepted candidate of each problem, by problem hash, from a run's actions (any order of types). */
export function acceptedCandidates(actions: readonly Action[]): Map<string, Acceptance> {
  const accepted = new Map<string, Acceptance>();
  for (const action of actions) {
    if (action.type !== 'accept' || action.candidateId === null || action.problemHash === null) continue;
    accepted.set(action.problemHash, { candidateId: action.candidateId, note: action.note, createdAt: action.createdAt });
  }
  return accepted;
}
