import { ApiError } from '../http/api-error.js';
import { errorResponses, runParamsSchema } from '../api-schemas/common-schemas.js';
import { runDetailSchema, runEventsQuerySchema, runEventsSchema, runListSchema } from '../api-schemas/run-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { readRunPlan } from '../views/run-plan.js';
import { toRunListItem } from '../views/run-view.js';

/** Events the run page shows at first; the live stream sends the rest. */
const RECENT_EVENTS = 100;

/** `GET /api/runs`, `GET /api/runs/:runId` and `GET /api/runs/:runId/events`. */
export function registerRunsRoutes(app: ZodApp, { store }: ServerContext): void {
  app.get(
    '/api/runs',
    { schema: { tags: ['runs'], summary: 'Every run, newest first, with per-problem summaries', response: { 200: runListSchema, ...errorResponses } } },
    async () => {
      const summaries = await store.listRuns();
      return { store: store.location, runs: await Promise.all(summaries.map((summary) => toRunListItem(store, summary))) };
    },
  );

  app.get(
    '/api/runs/:runId',
    {
      schema: {
        tags: ['runs'],
        summary: 'One run: summary, configuration, actions, ideas and recent events',
        params: runParamsSchema,
        response: { 200: runDetailSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { runId } = request.params;
      const summary = await store.getRunSummary(runId);
      if (!summary) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}; GET /api/runs lists them`);
      const events = await store.listEvents(runId);
      return {
        run: { ...(await toRunListItem(store, summary)), config: summary.config, resumable: readRunPlan(summary) !== null },
        actions: await store.listActions(runId),
        ideas: await store.listIdeas(runId),
        recentEvents: events.slice(-RECENT_EVENTS),
      };
    },
  );

  app.get(
    '/api/runs/:runId/events',
    {
      schema: {
        tags: ['runs'],
        summary: "A run's events after a cursor, oldest first (poll with the last id seen)",
        params: runParamsSchema,
        querystring: runEventsQuerySchema,
        response: { 200: runEventsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { runId } = request.params;
      if (!(await store.getRun(runId))) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      const { afterId, limit } = request.query;
      return { events: await store.listEvents(runId, { ...(afterId === undefined ? {} : { afterId }), limit }) };
    },
  );
}
