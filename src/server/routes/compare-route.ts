import { z } from 'zod';
import { runIdSchema } from '../../store/store-input-schemas.js';
import { ApiError } from '../http/api-error.js';
import { errorResponses } from '../api-schemas/common-schemas.js';
import { runComparisonSchema } from '../api-schemas/report-schemas.js';
import { buildRunReport } from '../report/report-data.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { compareRuns } from '../views/run-comparison.js';

const compareQuerySchema = z.object({ a: runIdSchema, b: runIdSchema });

/** `GET /api/compare/runs?a=RUN&b=RUN`: two runs' reports matched problem by problem. */
export function registerCompareRoute(app: ZodApp, { store, now }: ServerContext): void {
  app.get(
    '/api/compare/runs',
    {
      schema: {
        tags: ['reports'],
        summary: 'Compare two runs on the problems they share: verdicts, speedups, metrics per level',
        querystring: compareQuerySchema,
        response: { 200: runComparisonSchema, ...errorResponses },
      },
    },
    async (request) => {
      const [a, b] = await Promise.all([buildRunReport(store, request.query.a, { now }), buildRunReport(store, request.query.b, { now })]);
      if (!a) throw ApiError.notFound(`no run \`${request.query.a}\` in ${store.location}`);
      if (!b) throw ApiError.notFound(`no run \`${request.query.b}\` in ${store.location}`);
      return compareRuns(a, b);
    },
  );
}
