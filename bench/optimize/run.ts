/**
 * One scripted `kforge optimize` run per strategy (refine, sample, ideas) on one problem: the real
 * CLI, the real evaluator on the chosen backend, and an OpenAI-compatible HTTP server on loopback
 * whose replies are scripted from the problem's shipped examples (a build failure, its fix, a faster
 * kernel, a wrong one, a reply without code, a 429). The replies are scripted, so the record shows
 * the machinery (prompts, feedback, lineage, store, report), not any model's skill.
 *
 *   node --import tsx bench/optimize/run.ts [--backend cuda|cpu] [--out DIR] [--strategies refine,sample,ideas]
 *
 * The cuda script is made from examples/level1_01_relu/cuda_*.py on problems/level1/01_relu.py; the
 * cpu one (a dry run of the same machinery on a machine without a GPU) from
 * examples/level1_02_gelu/cpu_fast.py on problems/level1/02_gelu.py. Every strategy shares one
 * build cache (KFORGE_CACHE_DIR, default a folder of this run), so a kernel is built once.
 * `KFORGE_CLI` names the CLI entry to start (default bin/kforge.js; a bundle where no tsx is
 * installed). Writes result.json and result.md into --out and prints the markdown's path.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { REPOSITORY_ROOT } from '../../src/core/repository-paths.js';
import { SqliteRunStore } from '../../src/store/sqlite/sqlite-run-store.js';
import { startOpenAiCompatibleServer, type ScriptedStep } from '../../test-support/openai-compatible-server.js';
import { log, reasonLine } from '../bench-support.js';

const STRATEGIES = ['refine', 'sample', 'ideas'] as const;
type StrategyName = (typeof STRATEGIES)[number];

const argumentsSchema = z.object({
  backend: z.enum(['cuda', 'cpu'], { error: () => 'expected `--backend` to be cuda or cpu' }).default('cuda'),
  out: z.string().min(1).optional(),
  strategies: z
    .string()
    .default(STRATEGIES.join(','))
    .transform((value) => value.split(',').map((name) => name.trim()))
    .pipe(z.array(z.enum(STRATEGIES, { error: () => `expected \`--strategies\` to list ${STRATEGIES.join(', ')}` })).min(1)),
});

const fence = (source: string): string => `Here is the kernel.\n\n\`\`\`python\n${source}\`\`\`\n`;
const ideas = (items: Array<{ label: string; idea: string }>): string => `Ideas for this round:\n\n\`\`\`json\n${JSON.stringify(items, null, 2)}\n\`\`\`\n`;

interface Kernels {
  problem: string;
  compileError: string;
  incorrect: string;
  /** Correct and slower than `fast` (cuda: without its 16-byte loads; cpu: without OpenMP). */
  scalar: string;
  fast: string;
  /** Correct, a different source from `fast` (cuda: 512 threads a block; cpu: -O2). */
  wide: string;
}

/** `source` with each [from, to] replaced once; throws when one is not found, naming `file`. */
function variant(source: string, file: string, edits: Array<[string | RegExp, string]>): string {
  return edits.reduce((text, [from, to]) => {
    const next = text.replace(from, to);
    if (next === text) throw new Error(`bench/optimize: ${file} changed (${String(from)} not found); update the variants this script makes from it`);
    return next;
  }, source);
}

/** The scripted kernels, made from a problem's shipped examples: the CUDA ReLU, or the C++ GELU on cpu. */
async function kernels(backend: 'cuda' | 'cpu'): Promise<Kernels> {
  const read = (folder: string, name: string) => readFile(path.join(REPOSITORY_ROOT, 'examples', folder, name), 'utf8');
  if (backend === 'cuda') {
    const [compileError, incorrect, fast] = await Promise.all([
      read('level1_01_relu', 'cuda_compile_error.py'),
      read('level1_01_relu', 'cuda_incorrect.py'),
      read('level1_01_relu', 'cuda_fast.py'),
    ]);
    const file = 'examples/level1_01_relu/cuda_fast.py';
    return {
      problem: path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'),
      compileError,
      incorrect,
      fast,
      scalar: variant(fast, file, [
        [/const bool aligned = [^;]+;/, 'const bool aligned = false;'],
        ['kforge_example_relu_cuda', 'kforge_bench_relu_scalar'],
      ]),
      wide: variant(fast, file, [
        ['const int threads = 256;', 'const int threads = 512;'],
        ['kforge_example_relu_cuda', 'kforge_bench_relu_wide'],
      ]),
    };
  }
  const fast = await read('level1_02_gelu', 'cpu_fast.py');
  const file = 'examples/level1_02_gelu/cpu_fast.py';
  const named = (name: string): [string, string] => ['kforge_example_gelu_tanh_cpu', name];
  return {
    problem: path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py'),
    fast,
    compileError: variant(fast, file, [['return out;', 'return kforge_bench_undefined_tensor;'], named('kforge_bench_gelu_broken')]),
    incorrect: variant(fast, file, [['const float u = 0.7978845608028654f *', 'const float u = 0.5f *'], named('kforge_bench_gelu_wrong')]),
    scalar: variant(fast, file, [[/#pragma omp parallel for schedule\(static\)\n/g, ''], named('kforge_bench_gelu_serial')]),
    wide: variant(fast, file, [['"-O3", ', '"-O2", '], named('kforge_bench_gelu_o2')]),
  };
}

interface StrategyPlan {
  script: ScriptedStep[];
  maxCandidates: number;
  strategy: { name: StrategyName; options?: Record<string, unknown> };
}

function planFor(name: StrategyName, k: Kernels): StrategyPlan {
  switch (name) {
    case 'refine':
      return {
        strategy: { name },
        maxCandidates: 4,
        script: [
          fence(k.compileError),
          { status: 429, retryAfterSeconds: 0, message: 'rate limited' },
          fence(k.scalar),
          'Next I would vectorise the loads, but there is no code in this reply.',
          fence(k.fast),
          fence(k.wide),
        ],
      };
    case 'sample':
      return {
        strategy: { name, options: { samples: 4, width: 4 } },
        maxCandidates: 4,
        script: [fence(k.fast), fence(k.incorrect), fence(k.compileError), fence(k.scalar)],
      };
    case 'ideas':
      return {
        strategy: { name, options: { rounds: 2, ideasPerRound: 2, implementationsPerIdea: 1, seeds: 1, fixTurns: 1, width: 1 } },
        maxCandidates: 6,
        script: [
          ideas([
            { label: 'vector loads', idea: 'Load and store float4 (16 bytes) per thread with a grid-stride loop.' },
            { label: 'scalar grid stride', idea: 'One float per thread in a grid-stride loop, blocks capped at 32 per SM.' },
          ]),
          fence(k.compileError),
          fence(k.fast),
          fence(k.scalar),
          ideas([
            { label: 'wider blocks', idea: 'Keep the float4 loop and use 512 threads a block.' },
            { label: 'negated compare', idea: 'Write the ReLU as a select on the sign bit.' },
          ]),
          fence(k.wide),
          fence(k.incorrect),
          fence(k.scalar),
        ],
      };
  }
}

interface Child {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** The build and baseline cache every strategy's run shares: KFORGE_CACHE_DIR, else `cache` beside the strategies' folders. */
const cacheDirectory = (strategyFolder: string): string => process.env.KFORGE_CACHE_DIR ?? path.join(path.dirname(strategyFolder), 'cache');

function kforge(args: string[], cwd: string): Promise<Child> {
  const entry = process.env.KFORGE_CLI ?? path.join(REPOSITORY_ROOT, 'bin', 'kforge.js');
  const started = performance.now();
  const child = spawn(process.execPath, [entry, ...args], {
    cwd,
    env: { ...process.env, KFORGE_CACHE_DIR: cacheDirectory(cwd) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started })));
}

/** One stored candidate as the record shows it: its lineage, verdict and time. */
interface CandidateRow {
  id: number;
  parent: number | null;
  round: number;
  idea: string | null;
  origin: string;
  verdict: string | null;
  buildS: number | null;
  medianMs: number | null;
  vsEager: number | null;
  /** The first reason of a verdict other than `correct` (`check: message`, its first line), so a record explains itself. */
  reason: string | null;
}

/** The run's candidates from its store, oldest first. */
async function candidateRows(store: string, runId: string): Promise<CandidateRow[]> {
  const opened = await SqliteRunStore.open({ path: store });
  try {
    return (await opened.listCandidates(runId)).map((candidate) => {
      const build = candidate.evaluation?.result.stages?.build;
      const firstReason = candidate.evaluation?.result.reasons[0];
      return {
        id: candidate.id,
        parent: candidate.parentId,
        round: candidate.round,
        idea: candidate.ideaLabel,
        origin: candidate.origin,
        verdict: candidate.evaluation?.verdict ?? null,
        buildS: build === undefined ? null : build / 1000,
        medianMs: candidate.evaluation?.candidateMedianMs ?? null,
        vsEager: candidate.evaluation?.speedupVsEager ?? null,
        reason: firstReason ? reasonLine(firstReason) : null,
      };
    });
  } finally {
    await opened.close();
  }
}

interface StrategyResult {
  strategy: StrategyName;
  runId: string | null;
  candidates: CandidateRow[];
  exitCode: number | null;
  wallS: number;
  requests: number;
  optimizeOutput: unknown;
  report: string;
  error: string | null;
}

async function runStrategy(name: StrategyName, k: Kernels, backend: string, work: string): Promise<StrategyResult> {
  const plan = planFor(name, k);
  const folder = path.join(work, name);
  await mkdir(folder, { recursive: true });
  const config = path.join(folder, 'kforge.config.json');
  await writeFile(config, `${JSON.stringify({ strategy: plan.strategy, concurrency: { 'openai-compatible': 1 } }, null, 2)}\n`, 'utf8');
  const server = await startOpenAiCompatibleServer({ lifetimeMs: 20 * 60_000, script: plan.script });
  try {
    const store = path.join(folder, 'kforge.db');
    log(`${name}: kforge optimize (${plan.script.length} scripted replies, at most ${plan.maxCandidates} candidates)`);
    const optimize = await kforge(
      [
        'optimize',
        k.problem,
        '--config',
        config,
        '--provider',
        'openai-compatible',
        '--base-url',
        server.baseUrl,
        '--model',
        'scripted',
        '--backend',
        backend,
        '--max-candidates',
        String(plan.maxCandidates),
        '--store',
        store,
        '--out',
        path.join(folder, 'out'),
        '--json',
      ],
      folder,
    );
    let output: { run_id?: string } | null = null;
    try {
      output = JSON.parse(optimize.stdout) as { run_id?: string };
    } catch {
      output = null;
    }
    const runId = output?.run_id ?? /event=run-started run=(\S+)/.exec(optimize.stderr)?.[1] ?? null;
    const report = runId ? await kforge(['report', runId, '--store', store, '--format', 'md'], folder) : null;
    const candidates = runId ? await candidateRows(store, runId) : [];
    log(`${name}: exit ${optimize.code} in ${(optimize.wallMs / 1000).toFixed(1)} s, ${server.requests.length} model requests`);
    return {
      strategy: name,
      runId,
      candidates,
      exitCode: optimize.code,
      wallS: optimize.wallMs / 1000,
      requests: server.requests.length,
      optimizeOutput: output,
      report: report?.stdout ?? '',
      error: optimize.code === 0 ? null : optimize.stderr.slice(-4000),
    };
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { backend: { type: 'string' }, out: { type: 'string' }, strategies: { type: 'string' } }, strict: true });
  const parsed = argumentsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(`bench/optimize: ${parsed.error.issues[0]?.message ?? 'invalid arguments'}\n`);
    process.exit(2);
  }
  const args = parsed.data;
  const measuredAt = new Date().toISOString();
  const out = path.resolve(
    args.out ?? path.join(REPOSITORY_ROOT, 'bench', 'optimize', 'results', `${args.backend}-${measuredAt.slice(0, 19).replace(/:/g, '')}`),
  );
  await mkdir(out, { recursive: true });
  const work = await mkdtemp(path.join(os.tmpdir(), 'kforge-optimize-bench-'));
  const k = await kernels(args.backend);
  const results: StrategyResult[] = [];
  for (const name of args.strategies) results.push(await runStrategy(name, k, args.backend, work));
  const command = `node --import tsx bench/optimize/run.ts ${process.argv.slice(2).join(' ')}`.trim();
  await writeFile(
    path.join(out, 'result.json'),
    `${JSON.stringify({ measured_at: measuredAt, command, host: os.hostname(), work, results }, null, 2)}\n`,
    'utf8',
  );
  const lines = [
    `# kforge optimize, one scripted run per strategy, ${args.backend} backend`,
    '',
    `Measured ${measuredAt} on ${os.hostname()} (${os.availableParallelism()} cores). Command: \`${command}\`.`,
    '',
    'The model is an OpenAI-compatible server on loopback with **scripted replies** made from the shipped',
    `${args.backend === 'cuda' ? 'ReLU' : 'GELU'} examples: this shows the search machinery, not a model's skill.`,
    '',
    '| strategy | exit | wall | model requests | run |',
    '|---|---|---|---|---|',
    ...results.map((result) => `| ${result.strategy} | ${result.exitCode} | ${result.wallS.toFixed(1)} s | ${result.requests} | ${result.runId ?? '—'} |`),
    '',
    ...results.flatMap((result) => [
      `## ${result.strategy}`,
      '',
      '| candidate | parent | round | idea | origin | verdict | build | median | vs eager | reason |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...result.candidates.map(
        (row) =>
          `| #${row.id} | ${row.parent === null ? '—' : `#${row.parent}`} | ${row.round} | ${row.idea ?? '—'} | ${row.origin} | ${row.verdict ?? 'not evaluated'} | ${row.buildS === null ? '—' : `${row.buildS.toFixed(1)} s`} | ${row.medianMs === null ? '—' : `${row.medianMs.toPrecision(4)} ms`} | ${row.vsEager === null ? '—' : `${row.vsEager.toFixed(2)}x`} | ${row.reason === null ? '—' : row.reason.replace(/\|/g, '\\|')} |`,
      ),
      '',
      result.report.trim().replace(/^# /gm, '### ').replace(/^## /gm, '#### ') || '(no report)',
      '',
      ...(result.error ? ['Error output:', '', '```', result.error.trim(), '```', ''] : []),
    ]),
  ];
  await writeFile(path.join(out, 'result.md'), `${lines.join('\n')}\n`, 'utf8');
  process.stdout.write(`${path.join(out, 'result.md')}\n`);
}

await main();
