import { describe } from 'node:test';
import { describeCandidatesAndEvaluations } from './conformance/candidates-and-evaluations.conformance.js';
import type { OpenEmptyStore } from './conformance/conformance-setup.js';
import { describeIdeasEventsActions } from './conformance/ideas-events-actions.conformance.js';
import { describeRunsAndProblems } from './conformance/runs-and-problems.conformance.js';
import { describeSummaries } from './conformance/summaries.conformance.js';

export type { OpenEmptyStore } from './conformance/conformance-setup.js';

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
