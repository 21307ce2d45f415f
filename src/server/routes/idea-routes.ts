import { ApiError } from '../http/api-error.js';
import { ideaActionResponseSchema, optionalNoteBodySchema } from '../api-schemas/action-schemas.js';
import { errorResponses, ideaParamsSchema } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';

/** `POST /api/ideas/:ideaId/pin` and `/drop`: keep exploring an idea, or stop exploring it. */
export function registerIdeaRoutes(app: ZodApp, { store }: ServerContext): void {
  for (const [verb, type] of [
    ['pin', 'pin-idea'],
    ['drop', 'drop-idea'],
  ] as const) {
    app.post(
      `/api/ideas/:ideaId/${verb}`,
      {
        schema: {
          tags: ['actions'],
          summary:
            verb === 'pin' ? 'Pin an idea: the ideas strategy keeps exploring it in later rounds' : 'Drop an idea: the ideas strategy explores it no further',
          params: ideaParamsSchema,
          body: optionalNoteBodySchema,
          response: { 200: ideaActionResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const idea = await store.getIdea(request.params.ideaId);
        if (!idea) throw ApiError.notFound(`no idea ${request.params.ideaId} in ${store.location}`);
        const action = await store.recordAction({ runId: idea.runId, type, ideaId: idea.id, note: request.body.note ?? null });
        return { action, idea: (await store.getIdea(idea.id)) ?? idea };
      },
    );
  }
}
