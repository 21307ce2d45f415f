import { ApiError } from '../http/api-error.js';
import { errorResponses, problemParamsSchema } from '../api-schemas/common-schemas.js';
import { problemViewSchema } from '../api-schemas/problem-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { loadProblemView } from '../views/problem-view.js';

/** `GET /api/runs/:runId/problems/:problemHash`: the candidate tree and what a person did on the problem. */
export function registerProblemRoute(app: ZodApp, { store, editor }: ServerContext): void {
  app.get(
    '/api/runs/:runId/problems/:problemHash',
    {
      schema: {
        tags: ['problems'],
        summary: 'A problem within a run: candidates with lineage and verdicts, ideas, hints, actions',
        params: problemParamsSchema,
        response: { 200: problemViewSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { runId, problemHash } = request.params;
      const view = await loadProblemView(store, runId, problemHash, editor);
      if (!view) throw ApiError.notFound(`run \`${runId}\` has no problem ${problemHash.slice(0, 12)}…; GET /api/runs/${runId} lists its problems`);
      return view;
    },
  );
}
