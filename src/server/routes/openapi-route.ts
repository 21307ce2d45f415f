import type { ZodApp } from './server-context.js';

/** `GET /api/openapi.json`: the OpenAPI 3 document of every route, built from their zod schemas. */
export function registerOpenApiRoute(app: ZodApp): void {
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
