import fastifySwagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import pino from 'pino';
import path from 'node:path';
import { REPOSITORY_ROOT } from '../core/repository-paths.js';
import { CandidateEditService } from './actions/candidate-edit-service.js';
import { DetachedProcessLauncher } from './actions/detached-process-launcher.js';
import { installErrorHandler, installNotFoundHandler } from './error-handler.js';
import { installRequestGuard, LOOPBACK_HOST_NAMES } from './http/request-guard.js';
import { registerAcceptRoute } from './routes/accept-route.js';
import { registerCandidateRoute } from './routes/candidate-route.js';
import { registerCompareRoute } from './routes/compare-route.js';
import { registerEditRoute } from './routes/edit-route.js';
import { registerHealthRoute } from './routes/health-route.js';
import { registerHintRoute } from './routes/hint-route.js';
import { registerIdeaRoutes } from './routes/idea-routes.js';
import { registerOpenApiRoute } from './routes/openapi-route.js';
import { registerProblemRoute } from './routes/problem-route.js';
import { registerReportRoute } from './routes/report-route.js';
import { registerRunControlRoutes } from './routes/run-control-routes.js';
import { registerRewardRoutes } from './routes/reward-routes.js';
import { registerRunsRoutes } from './routes/runs-routes.js';
import { registerStreamRoutes } from './routes/stream-routes.js';
import type { ServerContext, ZodApp } from './routes/server-context.js';
import { DEFAULT_REWARD_BATCH_LIMIT } from './api-schemas/reward-schemas.js';
import { REWARD_DEFAULTS } from './reward/reward-server-options.js';
import { RewardService } from './reward/reward-service.js';
import type { ServerOptions } from './server-options.js';
import { EventStreams } from './streams/event-streams.js';
import { registerWebApp } from './web-app.js';

/** The built web app of this checkout. */
export const DEFAULT_WEB_ROOT = path.join(REPOSITORY_ROOT, 'web', 'dist');

/** The package's version, for the OpenAPI document. */
const API_VERSION = '1';

/** The OpenAPI document's description of the API, served at `/api/openapi.json`. */
const OPENAPI_OPTIONS = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'kforge dashboard API',
      version: API_VERSION,
      description:
        'Runs, problems, candidates and their evaluations as `kforge optimize` stores them, the actions through which a person steps in, and (with `kforge serve --reward`) rewards for reinforcement-learning loops.',
    },
    components: {
      securitySchemes: {
        token: {
          type: 'http',
          scheme: 'bearer',
          description: 'Needed when `kforge serve` binds beyond loopback, and always by the reward routes: the token it printed.',
        },
      },
    },
  },
  transform: jsonSchemaTransform,
} satisfies FastifyDynamicSwaggerOptions;

/**
 * The dashboard's server: the JSON API under `/api` (zod-validated, described at
 * `/api/openapi.json`), live streams, the actions through which a person steps in, and the built
 * web app. Nothing listens until the caller calls `listen`; tests use `inject`.
 *
 * @example
 * const app = await createServer({ store, evaluator });
 * await app.listen({ host: '127.0.0.1', port: 4319 });
 */
export async function createServer(options: ServerOptions): Promise<ZodApp> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, bodyLimit: 2 * 1024 * 1024 }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);
  installRequestGuard(app, { token: options.token, allowedHostNames: options.allowedHostNames ?? LOOPBACK_HOST_NAMES });

  await app.register(fastifySwagger, OPENAPI_OPTIONS);

  const context = createServerContext(options, logger);
  const { streams, editor } = context;
  registerRoutes(app, context, options);

  const fallback = await registerWebApp(app, options.webRoot === undefined ? DEFAULT_WEB_ROOT : options.webRoot, {
    embedInitialData: options.token === undefined,
  });
  installNotFoundHandler(app, fallback);

  app.addHook('preClose', async () => streams.closeAll());
  // Evaluations in flight are cancelled (their requests answer 503) so that closing does not wait minutes.
  const reward = context.reward;
  if (reward) app.addHook('preClose', async () => reward.close());
  app.addHook('onClose', async () => editor.close());
  return app;
}

/** What the routes share: the store, the edit service, the launcher, the streams and (with `reward`) the reward service. */
function createServerContext(options: ServerOptions, logger: pino.Logger): ServerContext {
  const streams = new EventStreams({ pollIntervalMs: options.pollIntervalMs ?? 500, heartbeatMs: options.heartbeatMs ?? 15_000, logger });
  const editor = new CandidateEditService({
    store: options.store,
    evaluator: options.evaluator,
    logger,
    ...(options.candidatesDirectory ? { candidatesDirectory: options.candidatesDirectory } : {}),
  });
  const context: ServerContext = {
    store: options.store,
    editor,
    launcher: options.launcher ?? new DetachedProcessLauncher(),
    storePath: options.storePath ?? options.store.location,
    streams,
    now: options.now ?? (() => new Date()),
  };
  if (options.reward) {
    if (options.reward.token.length < 16) throw new RangeError('expected the reward token to be at least 16 characters');
    context.reward = new RewardService({
      store: options.store,
      evaluator: options.reward.evaluator,
      logger,
      problemsDirectory: options.reward.problemsDirectory ?? path.join(REPOSITORY_ROOT, 'problems'),
      workDirectory: options.reward.workDirectory,
      concurrency: options.reward.concurrency ?? REWARD_DEFAULTS.concurrency,
      maxWaiting: options.reward.maxWaiting ?? REWARD_DEFAULTS.maxWaiting,
    });
  }
  return context;
}

/** Every route of the API, the reward routes only where the context has the reward service. */
function registerRoutes(app: ZodApp, context: ServerContext, options: ServerOptions): void {
  registerHealthRoute(app, { ...context, tokenRequired: options.token !== undefined });
  registerRunsRoutes(app, context);
  registerProblemRoute(app, context);
  registerCandidateRoute(app, context);
  registerRunControlRoutes(app, context);
  registerHintRoute(app, context);
  registerIdeaRoutes(app, context);
  registerAcceptRoute(app, context);
  registerEditRoute(app, context);
  registerCompareRoute(app, context);
  registerReportRoute(app, context);
  registerStreamRoutes(app, context, { runsIntervalMs: Math.max(options.pollIntervalMs ?? 500, 2000) });
  if (context.reward && options.reward) {
    registerRewardRoutes(app, { service: context.reward, token: options.reward.token, maxBatch: options.reward.maxBatch ?? DEFAULT_REWARD_BATCH_LIMIT });
  }
  registerOpenApiRoute(app);
}
