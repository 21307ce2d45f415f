import { ApiError } from '../http/api-error.js';
import { actionResponseSchema, hintBodySchema } from '../api-schemas/action-schemas.js';
import { errorResponses, runParamsSchema } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';

/** `POST /api/runs/:runId/hints`: a hint that goes into the next prompts of one problem, or of all. */
export function registerHintRoute(app: ZodApp, { store }: ServerContext): void {
  app.post(
    '/api/runs/:runId/hints',
    {
      schema: {
        tags: ['actions'],
        summary: 'Add a hint for the next prompts of a problem (or of every problem when `problemHash` is left out)',
        params: runParamsSchema,
        body: hintBodySchema,
        response: { 201: actionResponseSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      if (!(await store.getRun(runId))) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      const action = await store.recordAction({ runId, type: 'hint', note: request.body.note, problemHash: request.body.problemHash ?? null });
      return reply.code(201).send({ action });
    },
  );
}
