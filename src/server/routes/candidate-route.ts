import { ApiError } from '../http/api-error.js';
import { candidateDetailSchema } from '../api-schemas/candidate-schemas.js';
import { candidateParamsSchema, errorResponses } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { loadCandidateDetail } from '../views/candidate-detail.js';

/** `GET /api/candidates/:candidateId`: source, parent, evaluation, prompt and reply, build figures. */
export function registerCandidateRoute(app: ZodApp, { store, editor }: ServerContext): void {
  app.get(
    '/api/candidates/:candidateId',
    {
      schema: {
        tags: ['candidates'],
        summary: 'One candidate: code, parent code, verdict and timings, the model call that wrote it, CUDA build figures',
        params: candidateParamsSchema,
        response: { 200: candidateDetailSchema, ...errorResponses },
      },
    },
    async (request) => {
      const detail = await loadCandidateDetail(store, request.params.candidateId, editor);
      if (!detail) throw ApiError.notFound(`no candidate ${request.params.candidateId} in ${store.location}`);
      return detail;
    },
  );
}
