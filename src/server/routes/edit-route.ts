import { editBodySchema, editResponseSchema } from '../api-schemas/action-schemas.js';
import { candidateParamsSchema, conflictResponses } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { toCandidateNode } from '../views/candidate-node.js';

/**
 * `POST /api/candidates/:candidateId/edits`: store edited code as a new candidate (child of this
 * one, written by a person) and evaluate it under the run's settings. Answers 202 once stored;
 * the `candidate-evaluated` event on the run's stream says when the verdict is in.
 */
export function registerEditRoute(app: ZodApp, { editor }: ServerContext): void {
  app.post(
    '/api/candidates/:candidateId/edits',
    {
      schema: {
        tags: ['actions'],
        summary: 'Evaluate edited code as a new candidate, a child of this one marked as written by a person',
        params: candidateParamsSchema,
        body: editBodySchema,
        response: { 202: editResponseSchema, ...conflictResponses },
      },
    },
    async (request, reply) => {
      const { action, candidate } = await editor.submit({ candidateId: request.params.candidateId, source: request.body.source, note: request.body.note });
      const node = toCandidateNode({ ...candidate, evaluation: undefined }, { acceptedId: null, tracker: editor });
      return reply.code(202).send({ action, candidate: node });
    },
  );
}
