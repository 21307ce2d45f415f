import { describe } from 'node:test';
import { describeCandidatesAndEvaluations } from './run-store/candidates-and-evaluations.conformance.js';
import type { OpenEmptyStore } from './run-store/conformance-setup.js';
import { describeIdeasEventsActions } from './run-store/ideas-events-actions.conformance.js';
import { describeRunsAndProblems } from './run-store/runs-and-problems.conformance.js';
import { describeSummaries } from './run-store/summaries.conformance.js';

export type { OpenEmptyStore } from './run-store/conformance-setup.js';

/**
 * The behaviour every `RunStore` backend must have, as node:test suites. A backend's test file
 * calls this once with a function that opens a fresh, empty store on an injected clock.
 *
 * @example describeRunStoreConformance('SqliteRunStore', async ({ now }) => { … });
 */
export function describeRunStoreConformance(backend: string, open: OpenEmptyStore): void {
  describe(`RunStore conformance: ${backend}`, () => {
    describeRunsAndProblems(open);
    describeCandidatesAndEvaluations(open);
    describeIdeasEventsActions(open);
    describeSummaries(open);
  });
}
