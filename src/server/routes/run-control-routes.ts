import { ApiError } from '../http/api-error.js';
import { resumeBodySchema, resumeResponseSchema, stopResponseSchema } from '../api-schemas/action-schemas.js';
import { conflictResponses, runParamsSchema } from '../api-schemas/common-schemas.js';
import type { ServerContext, ZodApp } from './server-context.js';
import { readRunPlan } from '../views/run-plan.js';

/**
 * `POST /api/runs/:runId/stop` records a `stop` action for the search to act on (it polls its
 * actions and stops between steps); `POST /api/runs/:runId/resume` starts
 * `kforge optimize --resume` through the launcher and records a `resume` action.
 */
export function registerRunControlRoutes(app: ZodApp, { store, launcher, storePath }: ServerContext): void {
  app.post(
    '/api/runs/:runId/stop',
    {
      schema: {
        tags: ['actions'],
        summary: 'Ask a running run to stop; `acknowledged` says whether it has (its status left `running`)',
        params: runParamsSchema,
        response: { 202: stopResponseSchema, ...conflictResponses },
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      const run = await store.getRun(runId);
      if (!run) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      if (run.status !== 'running') throw ApiError.conflict('run-not-running', `run \`${runId}\` is ${run.status}, not running: there is nothing to stop`);
      const action = await store.recordAction({ runId, type: 'stop' });
      const after = await store.getRun(runId);
      const status = after?.status ?? run.status;
      return reply.code(202).send({ action, status, acknowledged: status !== 'running' });
    },
  );

  app.post(
    '/api/runs/:runId/resume',
    {
      schema: {
        tags: ['actions'],
        summary: 'Continue a stopped, paused or killed run in a detached `kforge optimize --resume`',
        params: runParamsSchema,
        body: resumeBodySchema,
        response: { 202: resumeResponseSchema, ...conflictResponses },
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      const run = await store.getRun(runId);
      if (!run) throw ApiError.notFound(`no run \`${runId}\` in ${store.location}`);
      if (run.status === 'running' && !request.body.force) {
        throw ApiError.conflict('run-running', `run \`${runId}\` says it is running; if its process died, resume with { "force": true }`);
      }
      if (run.status === 'finished')
        throw ApiError.conflict('run-finished', `run \`${runId}\` finished: start a new run with \`kforge optimize\` to search further`);
      if (!readRunPlan(run))
        throw ApiError.conflict('not-resumable', `run \`${runId}\` was not made by \`kforge optimize\` of this version, so it cannot be resumed`);
      const launched = await launcher.resume({ runId, storePath });
      const note = `${launched.pid === null ? 'started' : `pid ${launched.pid}`}; log ${launched.logPath}`;
      const action = await store.recordAction({ runId, type: 'resume', note });
      return reply.code(202).send({ action, pid: launched.pid, logPath: launched.logPath });
    },
  );
}
