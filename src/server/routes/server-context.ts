import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RunStore } from '../../store/run-store.js';
import type { CandidateEditService } from '../actions/candidate-edit-service.js';
import type { RunLauncher } from '../actions/run-launcher.js';
import type { RewardService } from '../reward/reward-service.js';
import type { EventStreams } from '../streams/event-streams.js';

/** The fastify instance with zod schemas as its type provider, as every route file receives it. */
export type ZodApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

/** What the routes share, wired once in `createServer`. */
export interface ServerContext {
  store: RunStore;
  editor: CandidateEditService;
  launcher: RunLauncher;
  storePath: string;
  streams: EventStreams;
  now: () => Date;
  /** The reward API's service (present with `--reward`). */
  reward?: RewardService;
}
