import type { Logger } from 'pino';
import type { Evaluator } from '../eval/evaluator.js';
import type { RunStore } from '../store/run-store.js';
import type { RunLauncher } from './actions/run-launcher.js';
import type { RewardServerOptions } from './reward/reward-server-options.js';

/** What {@link createServer} is wired to; everything but `store` and `evaluator` has a default. */
export interface ServerOptions {
  store: RunStore;
  /** Evaluates candidates a person edits in the page. */
  evaluator: Evaluator;
  /** When set, every `/api` request must carry it. `kforge serve` sets one whenever it binds beyond loopback. */
  token?: string | undefined;
  /** Default: silent. */
  logger?: Logger;
  /** Folder of the built web app (`web/dist`). Default: this checkout's `web/dist`; null serves the API only. */
  webRoot?: string | null;
  /**
   * Host names the `Host` header may name. Default: the loopback names (a defence against DNS
   * rebinding); pass `[]` to accept any, as `kforge serve` does when bound beyond loopback.
   */
  allowedHostNames?: readonly string[];
  /** Starts resumed runs. Default: a detached `kforge optimize --resume` with its log under `.kforge/logs`. */
  launcher?: RunLauncher;
  /** The store's file, handed to resumed runs. Default `store.location`. */
  storePath?: string;
  /** Where edited candidates' files are written. Default: each run's own candidates folder. */
  candidatesDirectory?: string;
  /** How often live streams look for new events, in ms. Default 500. */
  pollIntervalMs?: number;
  /** Interval of the keep-alive comment on live streams, in ms. Default 15000. */
  heartbeatMs?: number;
  /** Clock for reports. Default `() => new Date()`. */
  now?: () => Date;
  /** Serves the reward API (`POST /api/reward`, docs/reward.md) with this evaluator, behind this token. */
  reward?: RewardServerOptions;
}
