import { ApiError } from '../http/api-error.js';
import { actionResponseSchema, optionalNoteBodySchema } from '../api-schemas/action-schemas.js';
import { candidateParamsSchema, conflictResponses } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';

/** `POST /api/candidates/:candidateId/accept`: mark a correct candidate as the problem's accepted kernel. */
export function registerAcceptRoute(app: ZodApp, { store }: ServerContext): void {
  app.post(
    '/api/candidates/:candidateId/accept',
    {
      schema: {
        tags: ['actions'],
        summary: "Accept a correct candidate as the problem's kernel, with a note; the latest accept of a problem wins",
        params: candidateParamsSchema,
        body: optionalNoteBodySchema,
        response: { 201: actionResponseSchema, ...conflictResponses },
      },
    },
    async (request, reply) => {
      const candidate = await store.getCandidate(request.params.candidateId);
      if (!candidate) throw ApiError.notFound(`no candidate ${request.params.candidateId} in ${store.location}`);
      const verdict = candidate.evaluation?.verdict;
      if (verdict !== 'correct') {
        throw ApiError.conflict(
          'not-correct',
          `candidate ${candidate.id} is ${verdict ? verdict.replace(/_/g, ' ') : 'not evaluated yet'}: only a correct candidate can be accepted`,
        );
      }
      const action = await store.recordAction({ runId: candidate.runId, type: 'accept', candidateId: candidate.id, note: request.body.note ?? null });
      return reply.code(201).send({ action });
    },
  );
}
