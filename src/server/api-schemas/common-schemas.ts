import { z } from 'zod';
import { runIdSchema } from '../../store/store-input-schemas.js';

/**
 * Path parameters and the error body shared by every route. Ids arrive as strings in a URL and
 * are coerced here, so a handler only ever sees a validated number or hash.
 */

export const problemHashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'expected a problem hash: 64 lower-case hex characters (the API lists them)');

const idFromPath = (what: string) =>
  z.coerce
    .number({ error: `expected a ${what} id (a positive integer)` })
    .int(`expected a ${what} id (a positive integer)`)
    .positive(`expected a ${what} id (a positive integer)`);

export const runParamsSchema = z.object({ runId: runIdSchema });
export const problemParamsSchema = z.object({ runId: runIdSchema, problemHash: problemHashSchema });
export const candidateParamsSchema = z.object({ candidateId: idFromPath('candidate') });
export const ideaParamsSchema = z.object({ ideaId: idFromPath('idea') });

/** Every error the API answers with: a stable code and a sentence a person can act on. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** The field at fault, for validation errors (`body.note`). */
    field: z.string().optional(),
  }),
});
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

/** The error responses every route may give, for the OpenAPI document. */
export const errorResponses = {
  400: apiErrorSchema,
  401: apiErrorSchema,
  403: apiErrorSchema,
  404: apiErrorSchema,
} as const;

export const conflictResponses = { ...errorResponses, 409: apiErrorSchema } as const;
