/**
 * kforge's reward-API load test: a real `kforge serve --reward` (its own empty store and caches)
 * on the cpu backend, fed by `--concurrency` concurrent HTTP clients: first `--cold` distinct
 * candidates (every one a new evaluation through the evaluator), then `--warm` requests that
 * repeat them (answered from the server's recent results in memory), then, with `--restart 1`
 * (the default), the same `--warm` requests to a freshly started server on the same store (answered
 * from the SQLite store). Reports p50/p90/p99 latency and throughput per phase; writes result.json
 * and result.md into --out and prints the markdown's path.
 *
 *   node --import tsx bench/reward/run.ts [--backend cpu|cuda] [--cold 64] [--warm 500] [--concurrency 16] [--trials 5]
 *     [--perf-trials 10] [--warmup-trials 2] [--reward-concurrency 32] [--restart 1] [--out DIR] [--python PY]
 *
 * With `--backend cuda` the server's evaluator times on the GPU (the same plain-PyTorch candidates,
 * so the figures are the reward service's own cost around a GPU evaluation, not a build's).
 * `KFORGE_CLI` names the CLI entry to start (default bin/kforge.js; a bundle where no tsx is installed).
 *
 * The problem is the tiny `test-support/fixtures/problems/scale-add.py` (sent inline); the
 * candidates are its plain-PyTorch honest candidate and, every fourth, its wrong one, each with a
 * distinct comment, under the `pytorch` guard policy (nothing to compile).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { REPOSITORY_ROOT } from '../../src/core/repository-paths.js';
import { summarizeLatencies, type LatencySummary } from './latency-stats.js';
import { count, cpuModel, log, reasonLine } from '../bench-support.js';

const argumentsSchema = z.object({
  backend: z.enum(['cpu', 'cuda'], { error: () => 'expected `--backend` to be cpu or cuda' }).default('cpu'),
  cold: count('cold', 1).default(64),
  warm: count('warm', 0).default(500),
  concurrency: count('concurrency', 1).default(16),
  trials: count('trials', 1).default(5),
  'perf-trials': count('perf-trials', 1).default(10),
  'warmup-trials': count('warmup-trials', 0).default(2),
  'reward-concurrency': count('reward-concurrency', 1).default(32),
  restart: z.enum(['0', '1'], { error: () => 'expected `--restart` to be 0 or 1' }).default('1'),
  out: z.string().min(1).optional(),
  python: z
    .string()
    .min(1)
    .default(process.env.KFORGE_PYTHON ?? '/usr/bin/python3'),
});
type Arguments = z.infer<typeof argumentsSchema>;

function parse(): Arguments {
  const names = Object.keys(argumentsSchema.shape);
  const { values } = parseArgs({ options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])), strict: true });
  const parsed = argumentsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(`bench/reward: ${parsed.error.issues[0]?.message ?? 'invalid arguments'}\n`);
    process.exit(2);
  }
  return parsed.data;
}

interface Server {
  child: ChildProcess;
  base: string;
  token: string;
}

/** Starts `kforge serve --reward` on a free port and waits for the line that gives its address and token. */
async function startServer(args: Arguments, work: string): Promise<Server> {
  const entry = process.env.KFORGE_CLI ?? path.join(REPOSITORY_ROOT, 'bin', 'kforge.js');
  const child = spawn(
    process.execPath,
    [entry, 'serve', '--reward', '--port', '0', '--store', path.join(work, 'kforge.db'), '--reward-concurrency', String(args['reward-concurrency'])],
    {
      cwd: work,
      env: { ...process.env, KFORGE_PYTHON: args.python, KFORGE_CACHE_DIR: path.join(work, 'cache'), KFORGE_LOG_LEVEL: 'warn', KFORGE_TOKEN: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /export KFORGE_URL=(\S+) KFORGE_TOKEN=(\S+)/.exec(stderr);
      if (found) resolve({ child, base: found[1]!, token: found[2]! });
    });
    child.once('exit', (code) => reject(new Error(`kforge serve exited (${code}): ${stderr}`)));
  });
}

/** Ctrl-C to the server, and wait for it to exit. */
async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGINT');
  await exited;
}

interface Answer {
  latencyMs: number;
  status: number;
  retriedBusy: number;
  source: string | null;
  verdict: string | null;
  reward: number | null;
  environment: Record<string, unknown> | null;
  /** `check: first line of its message` of each reason of a verdict other than `correct`. */
  reasons: string[];
}

/** One reward request, retried after Retry-After on 429; latency from the first attempt to the final answer. */
async function send(server: Server, body: string): Promise<Answer> {
  const startedMs = performance.now();
  let retriedBusy = 0;
  for (;;) {
    let response: Response;
    try {
      response = await fetch(`${server.base}/api/reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
        body,
      });
    } catch {
      return { latencyMs: performance.now() - startedMs, status: 0, retriedBusy, source: null, verdict: null, reward: null, environment: null, reasons: [] };
    }
    if (response.status === 429) {
      retriedBusy += 1;
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
      continue;
    }
    const json = (await response.json()) as {
      source?: string;
      verdict?: string;
      reward?: number;
      result?: { environment?: Record<string, unknown> | null; reasons?: Array<{ check?: string; message?: string }> };
    };
    const reasons = (json.result?.reasons ?? []).map(reasonLine);
    return {
      latencyMs: performance.now() - startedMs,
      status: response.status,
      retriedBusy,
      source: json.source ?? null,
      verdict: json.verdict ?? null,
      reward: json.reward ?? null,
      environment: json.result?.environment ?? null,
      reasons,
    };
  }
}

interface Phase {
  name: string;
  summary: LatencySummary;
  sources: Record<string, number>;
  verdicts: Record<string, number>;
  /** For each verdict other than `correct`: its reasons (`check: message`) and how often each came. */
  reasons: Record<string, Record<string, number>>;
  loadAverage: { mean: number; max: number };
}

const tally = (values: ReadonlyArray<string | null>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value ?? 'none'] = (counts[value ?? 'none'] ?? 0) + 1;
  return counts;
};

function reasonsByVerdict(answers: readonly Answer[]): Record<string, Record<string, number>> {
  const byVerdict: Record<string, Record<string, number>> = {};
  for (const answer of answers) {
    if (answer.verdict === null || answer.verdict === 'correct') continue;
    const counts = (byVerdict[answer.verdict] ??= {});
    for (const reason of answer.reasons.length > 0 ? answer.reasons : ['(no reason given)']) counts[reason] = (counts[reason] ?? 0) + 1;
  }
  return byVerdict;
}

/** Sends every body, `concurrency` at a time, sampling the 1-minute load average every 2 s. */
async function runPhase(name: string, server: Server, bodies: readonly string[], concurrency: number): Promise<{ phase: Phase; answers: Answer[] }> {
  const answers: Answer[] = new Array(bodies.length);
  const loads: number[] = [os.loadavg()[0] ?? 0];
  const sampler = setInterval(() => loads.push(os.loadavg()[0] ?? 0), 2000);
  let next = 0;
  let done = 0;
  const startedMs = performance.now();
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const index = next++;
      answers[index] = await send(server, bodies[index]!);
      done += 1;
      if (done % Math.max(1, Math.floor(bodies.length / 10)) === 0) log(`${name}: ${done}/${bodies.length}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const wallMs = performance.now() - startedMs;
  clearInterval(sampler);
  const summary = summarizeLatencies(
    answers.map((answer) => answer.latencyMs),
    answers.map((answer) => answer.status),
    answers.reduce((sum, answer) => sum + answer.retriedBusy, 0),
    wallMs,
  );
  const phase: Phase = {
    name,
    summary,
    sources: tally(answers.map((answer) => answer.source)),
    verdicts: tally(answers.map((answer) => answer.verdict)),
    reasons: reasonsByVerdict(answers),
    loadAverage: { mean: loads.reduce((sum, value) => sum + value, 0) / loads.length, max: Math.max(...loads) },
  };
  log(`${name}: ${bodies.length} requests in ${(wallMs / 1000).toFixed(1)} s, p50 ${summary.p50Ms?.toFixed(1)} ms, p99 ${summary.p99Ms?.toFixed(1)} ms`);
  return { phase, answers };
}

const ms = (value: number | null): string => (value === null ? '—' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`);
const counts = (record: Record<string, number>): string =>
  Object.entries(record)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');

function renderMarkdown(result: {
  backend: string;
  measuredAt: string;
  command: string;
  host: string;
  torch: string;
  settings: Record<string, unknown>;
  phases: Phase[];
}): string {
  const rows = result.phases.map(
    ({ name, summary, sources, verdicts, loadAverage }) =>
      `| ${name} | ${summary.requests} | ${ms(summary.p50Ms)} | ${ms(summary.p90Ms)} | ${ms(summary.p99Ms)} | ${ms(summary.maxMs)} | ${summary.throughputPerSecond.toFixed(2)} | ${(summary.wallMs / 1000).toFixed(1)} s | ${counts(summary.statuses)}${summary.retriedBusy ? ` (${summary.retriedBusy} × 429 retried)` : ''} | ${counts(sources)} | ${counts(verdicts)} | ${loadAverage.mean.toFixed(1)} (max ${loadAverage.max.toFixed(1)}) |`,
  );
  return [
    `# kforge reward API load test, ${result.backend} backend`,
    '',
    `Measured ${result.measuredAt} on ${result.host}, torch ${result.torch}, Node ${process.version}.`,
    '',
    `Command: \`${result.command}\``,
    '',
    `Settings: ${Object.entries(result.settings)
      .map(([key, value]) => `${key} ${String(value)}`)
      .join(', ')}.`,
    '',
    '| phase | requests | p50 | p90 | p99 | max | requests/s | wall | HTTP statuses | answered from | verdicts | load average (1 min) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...result.phases
      .filter((phase) => Object.keys(phase.reasons).length > 0)
      .flatMap((phase) => [
        `Reasons in phase ${phase.name}:`,
        '',
        ...Object.entries(phase.reasons).flatMap(([verdict, reasons]) =>
          Object.entries(reasons).map(([reason, count]) => `- ${verdict} × ${count}: ${reason}`),
        ),
        '',
      ]),
  ].join('\n');
}

async function main(): Promise<void> {
  const args = parse();
  const measuredAt = new Date().toISOString();
  const out = path.resolve(
    args.out ?? path.join(REPOSITORY_ROOT, 'bench', 'reward', 'results', `${args.backend}-${measuredAt.slice(0, 19).replace(/:/g, '')}`),
  );
  await mkdir(out, { recursive: true });
  const work = await mkdtemp(path.join(os.tmpdir(), 'kforge-reward-bench-'));
  const fixtures = path.join(REPOSITORY_ROOT, 'test-support', 'fixtures');
  const [problemSource, honest, wrong] = await Promise.all(
    [
      ['problems', 'scale-add.py'],
      ['candidates', 'scale-add-correct.py'],
      ['candidates', 'scale-add-incorrect.py'],
    ].map((parts) => readFile(path.join(fixtures, ...parts), 'utf8')),
  );
  const runTag = randomBytes(4).toString('hex');
  const options = {
    backend: args.backend,
    trials: args.trials,
    perfTrials: args['perf-trials'],
    warmupTrials: args['warmup-trials'],
    guardPolicy: 'pytorch',
    shaping: 'log-speedup',
  };
  const bodies = Array.from({ length: args.cold }, (_, index) =>
    JSON.stringify({
      problemSource,
      problemName: 'scale-add',
      candidateSource: `${index % 4 === 3 ? wrong : honest}\n# reward bench ${runTag} variant ${index}\n`,
      ...options,
    }),
  );
  log(`starting kforge serve --reward (work folder ${work})`);
  let server = await startServer(args, work);
  try {
    const cold = await runPhase('cold', server, bodies, args.concurrency);
    const repeats = Array.from({ length: args.warm }, (_, index) => bodies[index % bodies.length]!);
    const warm = args.warm > 0 ? await runPhase('warm', server, repeats, args.concurrency) : null;
    let restarted: Awaited<ReturnType<typeof runPhase>> | null = null;
    if (args.warm > 0 && args.restart === '1') {
      await stopServer(server);
      log('restarting kforge serve --reward on the same store');
      server = await startServer(args, work);
      restarted = await runPhase('warm after restart', server, repeats, args.concurrency);
    }
    const environment = cold.answers.find((answer) => answer.environment)?.environment ?? null;
    const gpu = args.backend === 'cuda' && environment?.device ? `${String(environment.device)}, ` : '';
    const host = `${os.hostname()}: ${gpu}${await cpuModel()} (${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB)`;
    const command = `node --import tsx bench/reward/run.ts ${process.argv.slice(2).join(' ')}`.trim();
    const settings = {
      backend: args.backend,
      concurrency: args.concurrency,
      'reward-concurrency': args['reward-concurrency'],
      cold: args.cold,
      warm: args.warm,
      restart: args.restart === '1',
      trials: args.trials,
      'perf-trials': args['perf-trials'],
      'warmup-trials': args['warmup-trials'],
      problem: 'scale-add (inline)',
      'guard policy': 'pytorch',
      shaping: 'log-speedup',
    };
    const phases = [cold.phase, ...(warm ? [warm.phase] : []), ...(restarted ? [restarted.phase] : [])];
    const torch = String(environment?.torch ?? '?');
    await writeFile(
      path.join(out, 'result.json'),
      `${JSON.stringify({ measured_at: measuredAt, command, host, environment, settings, phases }, null, 2)}\n`,
      'utf8',
    );
    await writeFile(path.join(out, 'result.md'), renderMarkdown({ backend: args.backend, measuredAt, command, host, torch, settings, phases }), 'utf8');
    process.stdout.write(`${path.join(out, 'result.md')}\n`);
  } finally {
    await stopServer(server);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
