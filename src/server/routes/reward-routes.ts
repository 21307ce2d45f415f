import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.js';
import {
  REWARD_BATCH_BODY_LIMIT_BYTES,
  REWARD_BODY_LIMIT_BYTES,
  rewardBatchRequestSchema,
  rewardBatchResponseSchema,
  rewardErrorResponses,
  rewardRequestSchema,
  rewardResponseSchema,
  shippedProblemsResponseSchema,
} from '../api-schemas/reward-schemas.js';
import { sameSecret, tokenOf } from '../http/request-guard.js';
import { RewardBusyError } from '../reward/reward-busy-error.js';
import type { RewardService } from '../reward/reward-service.js';
import { RewardUnavailableError } from '../reward/reward-unavailable-error.js';
import type { ZodApp } from './server-context.js';

/** What the reward routes need: the service, the token they check, and the batch bound. */
export interface RewardRoutesOptions {
  service: RewardService;
  /** Every reward request must carry it, whatever the server's own token rule. */
  token: string;
  maxBatch: number;
}

/** A route-level check of the reward token: the dashboard's rule (none on loopback) does not apply here. */
function requireToken(token: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const given = tokenOf(request);
    if (given === undefined)
      throw new ApiError(
        401,
        'token-required',
        'the reward API always needs the token `kforge serve --reward` printed: send `Authorization: Bearer <token>` (the Python client reads KFORGE_TOKEN)',
      );
    if (!sameSecret(given, token)) throw new ApiError(401, 'token-invalid', 'the token does not match the one `kforge serve --reward` printed');
  };
}

/** Busy and unavailable answers carry `Retry-After`; anything else goes to the shared error handler. */
async function withRetryAfter<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RewardBusyError) {
      reply.header('retry-after', String(error.retryAfterSeconds));
      throw new ApiError(429, 'busy', error.message, { cause: error });
    }
    if (error instanceof RewardUnavailableError) {
      reply.header('retry-after', String(error.retryAfterSeconds));
      throw new ApiError(503, error.code, error.message, { cause: error });
    }
    throw error;
  }
}

const security = [{ token: [] }];

/** A body over the route's limit, said in the API's words; anything else goes on to the shared error handler. */
function bodyTooLarge(limitBytes: number, route: string) {
  return (error: Error & { code?: string }): never => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      throw new ApiError(
        413,
        'body-too-large',
        `the body is over the ${limitBytes / 1024 / 1024} MiB limit of ${route}: send fewer or smaller sources (each at most 1 MiB), or split the batch`,
        { cause: error },
      );
    }
    throw error;
  };
}

/**
 * `POST /api/reward`, `POST /api/reward/batch` and `GET /api/reward/problems`: rewards for
 * reinforcement-learning loops (docs/reward.md). Every route needs the reward token.
 */
export function registerRewardRoutes(app: ZodApp, options: RewardRoutesOptions): void {
  const { service } = options;
  const onRequest = requireToken(options.token);

  app.post(
    '/api/reward',
    {
      onRequest,
      bodyLimit: REWARD_BODY_LIMIT_BYTES,
      errorHandler: bodyTooLarge(REWARD_BODY_LIMIT_BYTES, 'POST /api/reward'),
      schema: {
        tags: ['reward'],
        summary: 'Evaluate one candidate and shape its verdict and speedup into a reward; identical requests are answered from the store',
        security,
        body: rewardRequestSchema,
        response: { 200: rewardResponseSchema, ...rewardErrorResponses },
      },
    },
    async (request, reply) => withRetryAfter(reply, () => service.reward(request.body)),
  );

  app.post(
    '/api/reward/batch',
    {
      onRequest,
      bodyLimit: REWARD_BATCH_BODY_LIMIT_BYTES,
      errorHandler: bodyTooLarge(REWARD_BATCH_BODY_LIMIT_BYTES, 'POST /api/reward/batch'),
      schema: {
        tags: ['reward'],
        summary: `Rewards of up to ${options.maxBatch} candidates at once, evaluated concurrently, answered in request order`,
        security,
        body: rewardBatchRequestSchema(options.maxBatch),
        response: { 200: rewardBatchResponseSchema, ...rewardErrorResponses },
      },
    },
    async (request, reply) => withRetryAfter(reply, () => service.rewardBatch(request.body)),
  );

  app.get(
    '/api/reward/problems',
    {
      onRequest,
      schema: {
        tags: ['reward'],
        summary: 'The shipped problems a reward request may name (`problem: "level1/02_gelu"`)',
        security,
        response: { 200: shippedProblemsResponseSchema, ...rewardErrorResponses },
      },
    },
    async () => ({ problems: await service.listProblems() }),
  );
}
