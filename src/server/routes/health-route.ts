import { z } from 'zod';
import type { ServerContext, ZodApp } from './server-context.js';

export const healthSchema = z.object({
  ok: z.literal(true),
  /** The store file the server reads. */
  store: z.string(),
  runs: z.number().int(),
  /** Whether API requests need a token (the server is bound beyond loopback). */
  tokenRequired: z.boolean(),
});

/** `GET /api/health`: the store the server reads and how many runs it holds. */
export function registerHealthRoute(app: ZodApp, context: ServerContext & { tokenRequired: boolean }): void {
  app.get(
    '/api/health',
    { schema: { tags: ['server'], summary: 'Whether the server is up, and which store it reads', response: { 200: healthSchema } } },
    async () => ({
      ok: true as const,
      store: context.store.location,
      runs: (await context.store.listRuns()).length,
      tokenRequired: context.tokenRequired,
    }),
  );
}
