import { z } from 'zod';
import { ApiError } from '../http/api-error.js';
import { errorResponses, runParamsSchema } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';

/** Events sent per poll at most; a stream behind by more catches up over several polls at once. */
const BATCH = 500;

const streamQuerySchema = z.object({
  /** Send events after this id (the page passes the last one it has); default: only new ones. */
  afterId: z.coerce.number().int().nonnegative().optional(),
  token: z.string().optional(),
});

/** The id of the run's newest event, paging through in batches (no store call gives it directly). */
async function lastEventId(context: ServerContext, runId: string): Promise<number> {
  let cursor = 0;
  for (;;) {
    const page = await context.store.listEvents(runId, { afterId: cursor, limit: 1000 });
    if (page.length === 0) return cursor;
    cursor = page.at(-1)!.id;
  }
}

/**
 * Server-sent events. `GET /api/stream/runs/:runId` sends each of the run's events as it is
 * stored (`event: run-event`, `id` the event id, so a reconnecting client resumes with
 * `Last-Event-ID`). `GET /api/stream/runs` sends `runs-changed` when any run's status or
 * activity changes, for the runs list.
 */
export function registerStreamRoutes(app: ZodApp, context: ServerContext, options: { runsIntervalMs: number }): void {
  const { store, streams } = context;
  app.get(
    '/api/stream/runs/:runId',
    {
      schema: {
        tags: ['streams'],
        summary: 'Live events of one run (text/event-stream)',
        params: runParamsSchema,
        querystring: streamQuerySchema,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      if (!(await store.getRun(runId))) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      const resumeFrom = Number(request.headers['last-event-id']);
      let cursor =
        Number.isSafeInteger(resumeFrom) && resumeFrom >= 0 && request.headers['last-event-id'] !== undefined
          ? resumeFrom
          : (request.query.afterId ?? (await lastEventId(context, runId)));
      streams.open(reply, async () => {
        const events = await store.listEvents(runId, { afterId: cursor, limit: BATCH });
        if (events.length > 0) cursor = events.at(-1)!.id;
        return { events: events.map((event) => ({ id: event.id, event: 'run-event', data: event })), more: events.length === BATCH };
      });
    },
  );

  app.get(
    '/api/stream/runs',
    {
      schema: { tags: ['streams'], summary: 'Live changes to the list of runs (text/event-stream)', querystring: streamQuerySchema, response: errorResponses },
    },
    async (_request, reply) => {
      let signature: string | null = null;
      streams.open(
        reply,
        async () => {
          const runs = await store.listRuns();
          const next = runs.map((run) => `${run.id}:${run.status}:${run.updatedAt}`).join('|');
          const changed = signature !== null && next !== signature;
          signature = next;
          return { events: changed ? [{ event: 'runs-changed', data: { runs: runs.length } }] : [] };
        },
        options.runsIntervalMs,
      );
    },
  );
}
