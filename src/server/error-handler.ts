import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { StoreReferenceError } from '../store/errors/store-reference-error.js';
import { StoreValidationError } from '../store/errors/store-validation-error.js';
import type { ApiErrorBody } from './api-schemas/common-schemas.js';
import { ApiError } from './http/api-error.js';
import type { PageFallback } from './web-app.js';

const body = (code: string, message: string, field?: string): ApiErrorBody => ({ error: { code, message, ...(field ? { field } : {}) } });

/** `body.note` from a zod issue path such as `['note']` in the body. */
function fieldOf(error: FastifyError): string | undefined {
  const first = error.validation?.[0] as { instancePath?: string } | undefined;
  const path = first?.instancePath?.replace(/^\//, '').replace(/\//g, '.');
  return error.validationContext ? `${error.validationContext}${path ? `.${path}` : ''}` : path || undefined;
}

/**
 * Every error as `{ error: { code, message, field? } }`: validation failures are 400 with the
 * field named, store reference and validation errors 404 and 400, the API's own {@link ApiError}s
 * their status; anything else is logged and answered 500 without internals. Install it before
 * any route: fastify gives each route the error handler in force when the route is added.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issue = error.validation[0];
      const field = fieldOf(error);
      return reply.code(400).send(body('invalid-request', `${field ? `\`${field}\`: ` : ''}${issue?.message ?? 'malformed request'}`, field));
    }
    if (error instanceof ApiError) return reply.code(error.statusCode).send(body(error.code, error.message, error.field));
    if (error instanceof StoreReferenceError) return reply.code(404).send(body('not-found', error.message));
    if (error instanceof StoreValidationError) return reply.code(400).send(body('invalid-request', error.message));
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(body(error.code ?? 'bad-request', error.message));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(body('internal', 'the server failed on this request; its log says why'));
  });
}

/**
 * A URL no route matches: the page from `fallback` when it gives one (the web app's own router
 * shows the view), else a JSON 404 pointing at the API's description.
 */
export function installNotFoundHandler(app: FastifyInstance, fallback: PageFallback): void {
  app.setNotFoundHandler((request, reply) => {
    const page = fallback(request, reply);
    if (page) return page;
    return reply.code(404).send(body('not-found', `no route ${request.method} ${request.url.split('?')[0]}; GET /api/openapi.json lists the API`));
  });
}
