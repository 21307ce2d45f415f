import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { createCliLogger, LOG_FORMATS } from '../io/cli-logger.js';
import { watchLauncher, type LauncherWatch } from '../io/launcher-watch.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Evaluator } from '../../eval/evaluator.js';
import type { JobQueue } from '../../queue/job-queue.js';
import type { RunLauncher } from '../../server/actions/run-launcher.js';
import { createServer, DEFAULT_WEB_ROOT } from '../../server/create-server.js';
import { LOOPBACK_HOST_NAMES } from '../../server/http/request-guard.js';
import type { ZodApp } from '../../server/routes/server-context.js';
import { REWARD_DEFAULTS } from '../../server/reward/reward-server-options.js';
import type { OpenRedisJobQueueOptions } from '../../queue/redis/bullmq-job-queue.js';
import { openServeEvaluators, type ServeEvaluators } from './serve-evaluators.js';
import { QUEUE_NAME_PATTERN } from '../../queue/redis/redis-keys.js';
import { RedisUnreachableError } from '../../queue/redis/redis-unreachable-error.js';
import { StoreOpenError } from '../../store/errors/store-open-error.js';
import { StoreSchemaError } from '../../store/errors/store-schema-error.js';
import { DEFAULT_STORE_PATH, openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/sqlite/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { UsageError } from '../io/usage-error.js';
import { choiceFlag, integerFlag } from '../flags/flag-schemas.js';

/** Where `kforge serve` listens unless told otherwise. */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 4319;

/** What `kforge serve` needs beyond its io; tests replace any of it. */
export interface ServeCommandDependencies extends Partial<CliIo> {
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  /** Default: a local PipelinedEvaluator configured from the environment (build cache, host-wide GPU locks), as `kforge eval` uses it; with --redis, the queue. */
  createEvaluator?: (wiring: { logger: Logger; environment: NodeJS.ProcessEnv; cwd: string }) => Evaluator;
  launcher?: RunLauncher;
  /** Default: this checkout's `web/dist`. */
  webRoot?: string | null;
  /** Where SIGINT and SIGTERM are listened for. Default `process`. */
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Told the URL once the server listens (tests). */
  onListening?: (url: string) => void;
  /** Makes the token when one is needed and none was given. */
  randomToken?: () => string;
  /**
   * Evaluates reward requests (`--reward`) on this host; the command closes it after the server.
   * Default: a PipelinedEvaluator (warm workers, the bounded build pool, every device of the host)
   * with the caches `kforge eval` uses, as {@link openEvaluator} opens one.
   */
  createRewardEvaluator?: (wiring: { logger: Logger; environment: NodeJS.ProcessEnv; cwd: string }) => Evaluator | Promise<Evaluator>;
  /** With `--redis`: connects to the queue of `kforge worker` processes. Default: {@link openRedisJobQueue}. */
  openRedisQueue?: (options: OpenRedisJobQueueOptions) => Promise<JobQueue>;
}

const positiveCount = integerFlag;

const optionsSchema = z.object({
  store: z.string().min(1, 'expected `--store` to name a database file, got an empty string').optional(),
  host: z.string().trim().min(1, 'expected `--host` to name an address, got an empty string').default(DEFAULT_SERVE_HOST),
  port: z
    .string()
    .default(String(DEFAULT_SERVE_PORT))
    .transform((text, context) => {
      const value = Number(text);
      if (!/^\d+$/.test(text.trim()) || value > 65535) {
        context.addIssue({ code: 'custom', message: `expected \`--port\` to be a port number from 0 to 65535 (0 picks a free one), got \`${text}\`` });
        return z.NEVER;
      }
      return value;
    }),
  token: z.string().min(16, 'expected `--token` to be at least 16 characters: it is the only lock on a server others can reach').optional(),
  reward: z.boolean().default(false),
  rewardConcurrency: positiveCount('--reward-concurrency', 1).optional(),
  rewardQueue: positiveCount('--reward-queue', 0).optional(),
  redis: z.string().min(1, 'expected `--redis` to be a Redis URL such as redis://127.0.0.1:6379').optional(),
  queue: z.string().regex(QUEUE_NAME_PATTERN, 'expected `--queue` to be letters, digits, `_`, `.` or `-` (at most 64)').optional(),
  logFormat: choiceFlag('--log-format', LOG_FORMATS).optional(),
});

/** Whether `host` is this machine's loopback interface (nobody else can connect). */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** `http://host:port/`, with IPv6 addresses in brackets and the token in the fragment (never sent to the server, never logged). */
export function serverUrl(host: string, port: number, token?: string): string {
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shown}:${port}/${token ? `#token=${encodeURIComponent(token)}` : ''}`;
}

function waitForSignal(signals: Pick<NodeJS.Process, 'on' | 'off'>): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string): void => {
      signals.off('SIGINT', stop);
      signals.off('SIGTERM', stop);
      resolve(signal);
    };
    signals.on('SIGINT', stop);
    signals.on('SIGTERM', stop);
  });
}

/** The flags of `kforge serve`, checked, with the tokens settled. */
interface ServeSettings {
  options: z.infer<typeof optionsSchema>;
  loopback: boolean;
  /** The token API requests must carry; none on loopback unless one was given. */
  token: string | undefined;
  /** The reward API's token (with `--reward` only): the dashboard's, or one made up for it. */
  rewardToken: string | undefined;
}

function settleServeOptions(io: CliIo, rawOptions: unknown, dependencies: ServeCommandDependencies): ServeSettings {
  const parsed = optionsSchema.safeParse(rawOptions);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  const { host, reward } = parsed.data;
  if (!reward && (parsed.data.rewardConcurrency !== undefined || parsed.data.rewardQueue !== undefined)) {
    throw new UsageError('`--reward-concurrency` and `--reward-queue` need `--reward`');
  }
  const loopback = isLoopbackHost(host);
  const makeToken = dependencies.randomToken ?? (() => randomBytes(24).toString('base64url'));
  const givenToken = parsed.data.token ?? (io.environment.KFORGE_TOKEN?.trim() || undefined);
  if (reward && givenToken !== undefined && givenToken.length < 16) {
    throw new UsageError('expected KFORGE_TOKEN to be at least 16 characters with `--reward`: it is the only lock on the reward API');
  }
  const token = givenToken ?? (loopback ? undefined : makeToken());
  // The reward API always needs a token, on loopback too: the dashboard's, or one made up for it.
  const rewardToken = reward ? (token ?? makeToken()) : undefined;
  return { options: parsed.data, loopback, token, rewardToken };
}

async function serve(io: CliIo, rawOptions: unknown, dependencies: ServeCommandDependencies): Promise<number> {
  const settings = settleServeOptions(io, rawOptions, dependencies);
  const { options, loopback, token, rewardToken } = settings;
  const storePath = resolveStorePath({ path: options.store, cwd: io.cwd });
  const logger = createCliLogger(io, { format: options.logFormat });
  const store = await (dependencies.openStore ?? openRunStore)({ path: storePath, cwd: io.cwd });
  if (!options.redis && options.queue !== undefined) throw new UsageError('`--queue` goes with `--redis URL`');
  let evaluators: ServeEvaluators;
  try {
    evaluators = await openServeEvaluators({
      io,
      logger,
      redis: options.redis,
      queue: options.queue,
      reward: rewardToken !== undefined,
      createEvaluator: dependencies.createEvaluator,
      createRewardEvaluator: dependencies.createRewardEvaluator,
      openRedisQueue: dependencies.openRedisQueue,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const { editing, rewarding } = evaluators;
  let launcher: LauncherWatch | undefined;
  const webRoot = dependencies.webRoot === undefined ? DEFAULT_WEB_ROOT : dependencies.webRoot;
  const app = await createServer({
    store,
    evaluator: editing,
    token,
    logger,
    webRoot,
    allowedHostNames: loopback ? LOOPBACK_HOST_NAMES : [],
    storePath,
    ...(dependencies.launcher ? { launcher: dependencies.launcher } : {}),
    ...(rewarding && rewardToken
      ? {
          reward: {
            evaluator: rewarding,
            token: rewardToken,
            concurrency: options.rewardConcurrency ?? REWARD_DEFAULTS.concurrency,
            maxWaiting: options.rewardQueue ?? REWARD_DEFAULTS.maxWaiting,
          },
        }
      : {}),
  });
  try {
    const url = await listenAndAnnounce(io, app, settings, store.location, webRoot);
    dependencies.onListening?.(url);
    launcher = watchLauncher({ environment: io.environment });
    const stopped = await Promise.race([waitForSignal(dependencies.signals ?? process), launcher.gone.then(() => 'launcher')]);
    io.stderr.write(stopped === 'launcher' ? 'kforge serve: stopping: npm, which started it, is gone\n' : 'kforge serve: stopping\n');
    return 0;
  } finally {
    launcher?.stop();
    await app.close();
    await evaluators.close();
    await store.close();
  }
}

/** Listens where the flags say, then prints the URL on stdout and what a user should know on stderr; returns the URL. */
async function listenAndAnnounce(io: CliIo, app: ZodApp, settings: ServeSettings, storeLocation: string, webRoot: string | null): Promise<string> {
  const { options, loopback, token, rewardToken } = settings;
  const { host, port } = options;
  try {
    await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on ${host} is in use: pass --port N (0 picks a free one)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UsageError(`cannot listen on \`${host}\`: it is not an address of this machine`);
    throw error;
  }
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const url = serverUrl(host, boundPort, token);
  io.stdout.write(`${url}\n`);
  io.stderr.write(`kforge serve: reading ${storeLocation}; Ctrl-C stops the server\n`);
  if (!loopback) io.stderr.write(`kforge serve: listening beyond loopback on ${host}: API requests need the token (the URL above carries it)\n`);
  if (rewardToken !== undefined) {
    const base = serverUrl(host, boundPort).replace(/\/$/, '');
    io.stderr.write(`kforge serve: reward API on POST ${base}/api/reward and /api/reward/batch (docs/reward.md); every request needs the token:\n`);
    io.stderr.write(`  export KFORGE_URL=${base} KFORGE_TOKEN=${rewardToken}\n`);
  }
  if (webRoot !== null && !existsSync(path.join(webRoot, 'index.html'))) {
    io.stderr.write('kforge serve: the web app is not built: run `bash scripts/build-web.sh`; the JSON API works meanwhile\n');
  }
  return url;
}

/**
 * Adds `kforge serve [--store PATH] [--host 127.0.0.1] [--port 4319] [--token TOKEN] [--reward
 * [--reward-concurrency N] [--reward-queue N]]`: the dashboard and its JSON API over one store,
 * until Ctrl-C. On loopback no token is needed; bound to any other address it needs one
 * (`--token`, `KFORGE_TOKEN`, or one made up and printed in the URL). `--reward` adds the reward
 * API (docs/reward.md), which always needs a token, on loopback too (made up and printed when none
 * is given). Prints the URL on stdout. Exit status 0 when stopped, 2 for misuse.
 */
export function registerServeCommand(program: Command, dependencies: ServeCommandDependencies = {}): Command {
  return program
    .command('serve')
    .description(COMMAND_DESCRIPTIONS.serve)
    .option('--store <path>', `the store database (default ${DEFAULT_STORE_PATH})`)
    .option('--host <address>', `address to listen on (default ${DEFAULT_SERVE_HOST}; any other needs a token)`)
    .option('--port <port>', `port to listen on (default ${DEFAULT_SERVE_PORT}; 0 picks a free one)`)
    .option('--token <token>', 'token API requests must carry (default: KFORGE_TOKEN; made up when listening beyond loopback or with --reward)')
    .option('--reward', 'serve the reward API for RL training loops: POST /api/reward and /api/reward/batch (docs/reward.md)')
    .option('--reward-concurrency <n>', `reward evaluations handed to the evaluation queue at once (default ${REWARD_DEFAULTS.concurrency})`)
    .option('--redis <url>', 'evaluate reward requests and edits on the `kforge worker` processes of this Redis queue (docs/workers.md)')
    .option('--queue <name>', 'queue name with --redis (default kforge)')
    .option('--log-format <format>', `log lines on stderr: ${LOG_FORMATS.join(' or ')} (default: text, or $KFORGE_LOG_FORMAT)`)
    .option('--reward-queue <n>', `reward evaluations that may wait for a slot before requests get 429 (default ${REWARD_DEFAULTS.maxWaiting})`)
    .action(async (rawOptions: unknown) => {
      const io = resolveCliIo(dependencies);
      try {
        io.setExitCode(await serve(io, rawOptions, dependencies));
      } catch (error) {
        const usage = [UsageError, StoreOpenError, StoreSchemaError, RedisUnreachableError].some((kind) => error instanceof kind);
        if (!usage) throw error;
        io.stderr.write(`kforge serve: ${(error as Error).message}\n`);
        io.setExitCode(EXIT.usage);
      }
    });
}
