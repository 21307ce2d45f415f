import { z } from 'zod';
import { ApiError } from '../http/api-error.js';
import { errorResponses, runParamsSchema } from '../api-schemas/common-schemas.js';
import { buildRunReport } from '../report/report-data.js';
import { renderReport, reportFormatSchema } from '../report/report-format.js';
import type { ServerContext, ZodApp } from './server-context.js';

const reportQuerySchema = z.object({
  format: reportFormatSchema.default('html'),
  /** Serve as an attachment (a download) rather than inline. */
  download: z.enum(['0', '1']).default('0'),
});

/** `GET /api/runs/:runId/report?format=md|html|csv|json`: what `kforge report` prints. */
export function registerReportRoute(app: ZodApp, { store, now }: ServerContext): void {
  app.get(
    '/api/runs/:runId/report',
    {
      schema: {
        tags: ['reports'],
        summary: "The run's report: verdicts, fast_p, geometric-mean speedups, speed of light, tokens and cost, per problem and level",
        params: runParamsSchema,
        querystring: reportQuerySchema,
        response: { 200: z.string().describe('the report in the chosen format'), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      const report = await buildRunReport(store, runId, { now });
      if (!report) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      const rendered = renderReport(report, request.query.format);
      reply.type(rendered.contentType);
      if (request.query.download === '1') reply.header('content-disposition', `attachment; filename="kforge-report-${runId}.${rendered.extension}"`);
      if (request.query.format === 'html') reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
      return reply.send(rendered.text);
    },
  );
}
