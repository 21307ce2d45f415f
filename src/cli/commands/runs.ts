import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { stripVTControlCharacters } from 'node:util';
import picocolors from 'picocolors';
import { z } from 'zod';
import { DEFAULT_STORE_PATH, openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/sqlite/open-run-store.js';
import type { RunStatus, RunStore, RunSummary } from '../../store/run-store.js';
import { unknownRunMessage } from './unknown-run-message.js';
import { storeCommandFailure } from './store-command-errors.js';
import { UsageError } from '../io/usage-error.js';

/** What `kforge runs` needs from the outside world; tests replace any of it. */
export interface RunsCommandDependencies {
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  stdout?: { write(text: string): unknown };
  stderr?: { write(text: string): unknown };
  /** Default: sets `process.exitCode`. */
  setExitCode?: (code: number) => void;
  /** Directory a relative `--store` is taken from. Default `process.cwd()`. */
  cwd?: string;
  /** Colour the table. Default: when stdout is a terminal and NO_COLOR is unset. */
  color?: boolean;
}

const optionsSchema = z.object({
  json: z.boolean().default(false),
  store: z.string().min(1, 'expected `--store` to name a database file, got an empty string').optional(),
});
type RunsOptions = z.infer<typeof optionsSchema>;

/** A misuse the user can fix: exit status 2 and one line saying how. */
type Colors = ReturnType<typeof picocolors.createColors>;

const STATUS_COLOR: Record<RunStatus, 'cyan' | 'yellow' | 'green' | 'red'> = {
  running: 'cyan',
  paused: 'yellow',
  stopped: 'yellow',
  finished: 'green',
  failed: 'red',
};

const dash = '-';
const minute = (iso: string | null): string => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : dash);
const speedup = (value: number | null): string => (value === null ? dash : `${value.toFixed(2)}x`);
const share = (value: number | null): string => (value === null ? dash : `${Math.round(value * 100)}%`);
const cost = (usd: number | null): string => (usd === null ? dash : `$${usd.toFixed(2)}`);

/** 1234567 → `1.2M`, 1234 → `1.2k`, 999 → `999`. */
function count(value: number): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

/** Left-aligned columns two spaces apart; the header row is bold. Colour codes do not count towards width. */
function table(header: string[], rows: string[][], colors: Colors): string {
  const visible = (cell: string): number => stripVTControlCharacters(cell).length;
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => visible(row[column] ?? ''))));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => cell + ' '.repeat((widths[column] ?? 0) - visible(cell)))
      .join('  ')
      .trimEnd();
  return `${[colors.bold(line(header)), ...rows.map(line)].join('\n')}\n`;
}

function listTable(runs: RunSummary[], colors: Colors): string {
  const header = ['RUN', 'STATUS', 'STARTED', 'STRATEGY', 'MODEL', 'SOLVED', 'CORRECT', 'BEST', 'TOKENS IN/OUT', 'COST'];
  const rows = runs.map((run) => [
    run.id,
    colors[STATUS_COLOR[run.status]](run.status),
    minute(run.startedAt),
    run.strategy,
    run.model,
    `${run.totals.problemsSolved}/${run.totals.problems}`,
    run.totals.evaluated === 0 ? dash : `${run.totals.correct}/${run.totals.evaluated} ${share(run.totals.correctShare)}`,
    speedup(run.totals.bestSpeedupVsBest),
    `${count(run.totals.inputTokens)}/${count(run.totals.outputTokens)}`,
    cost(run.totals.costUsd),
  ]);
  return table(header, rows, colors);
}

function showText(run: RunSummary, colors: Colors): string {
  const { totals } = run;
  const lines = [
    `${colors.bold(`run ${run.id}`)}  ${colors[STATUS_COLOR[run.status]](run.status)}`,
    `  started ${minute(run.startedAt)}   last activity ${minute(run.updatedAt)}   finished ${minute(run.finishedAt)}`,
    `  strategy ${run.strategy}   model ${run.model}`,
    `  candidates ${totals.candidates} (${totals.evaluated} evaluated, ${totals.correct} correct, ${share(totals.correctShare)})` +
      `   best ${speedup(totals.bestSpeedupVsBest)}   tokens ${count(totals.inputTokens)} in / ${count(totals.outputTokens)} out` +
      `   cost ${cost(totals.costUsd)}   GPU ${totals.gpuSeconds.toFixed(1)} s   events ${totals.events}`,
  ];
  if (run.error) lines.push(colors.red(`  error: ${run.error}`));
  const header = ['PROBLEM', 'HASH', 'CANDIDATES', 'EVALUATED', 'CORRECT', 'BEST VERDICT', 'BEST', 'VS EAGER', 'VS COMPILE', 'MEDIAN MS', 'EVENTS'];
  const rows = run.problems.map((problem) => [
    problem.name,
    problem.problemHash.slice(0, 12),
    String(problem.candidates),
    String(problem.evaluated),
    String(problem.correct),
    problem.bestVerdict ?? dash,
    speedup(problem.bestSpeedupVsBest),
    speedup(problem.bestSpeedupVsEager),
    speedup(problem.bestSpeedupVsCompile),
    problem.bestCandidateMedianMs === null ? dash : problem.bestCandidateMedianMs.toPrecision(4),
    String(problem.events),
  ]);
  return `${lines.join('\n')}\n\n${table(header, rows, colors)}`;
}

/**
 * Adds `kforge runs list` and `kforge runs show RUN_ID` to `program`. Both read the store only.
 *
 * Longer than convention 4's 60 lines: it is one commander declaration, the subcommands and their flags in the order
 * `kforge runs --help` lists them, and splitting it would part a flag from its neighbours.
 */
export function registerRunsCommand(program: Command, deps: RunsCommandDependencies = {}): Command {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const setExitCode =
    deps.setExitCode ??
    ((code: number) => {
      process.exitCode = code;
    });
  const openStore = deps.openStore ?? openRunStore;
  const colors = picocolors.createColors(deps.color ?? (process.stdout.isTTY === true && !process.env.NO_COLOR));

  const withStore = async (rawOptions: unknown, work: (store: RunStore, options: RunsOptions) => Promise<void>): Promise<void> => {
    try {
      const parsed = optionsSchema.safeParse(rawOptions);
      if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
      const store = await openStore({ path: resolveStorePath({ path: parsed.data.store, cwd: deps.cwd }), mustExist: true });
      try {
        await work(store, parsed.data);
      } finally {
        await store.close();
      }
    } catch (error) {
      setExitCode(storeCommandFailure('runs', error, stderr));
    }
  };

  const runs = program.command('runs').description(COMMAND_DESCRIPTIONS.runs);
  const storeHelp = `the store database (default ${DEFAULT_STORE_PATH} in the working directory)`;

  runs
    .command('list')
    .description('every run, newest first: status, strategy, model, correct share, best speedup, tokens, cost')
    .option('--json', 'print one JSON object { store, runs } and nothing else on stdout')
    .option('--store <path>', storeHelp)
    .action((rawOptions: unknown) =>
      withStore(rawOptions, async (store, options) => {
        const summaries = await store.listRuns();
        if (options.json) stdout.write(`${JSON.stringify({ store: store.location, runs: summaries })}\n`);
        else if (summaries.length === 0) stdout.write(`no runs in ${store.location} yet: start one with \`kforge optimize\`\n`);
        else stdout.write(listTable(summaries, colors));
      }),
    );

  runs
    .command('show')
    .description('one run: per problem, candidates tried, best verdict and speedup, events')
    .argument('<run-id>', 'a run id, as `kforge runs list` prints it')
    .option('--json', 'print one JSON object { store, run } and nothing else on stdout')
    .option('--store <path>', storeHelp)
    .action((runId: string, rawOptions: unknown) =>
      withStore(rawOptions, async (store, options) => {
        const summary = await store.getRunSummary(runId);
        if (!summary) {
          throw new UsageError(unknownRunMessage(runId, store.location));
        }
        stdout.write(options.json ? `${JSON.stringify({ store: store.location, run: summary })}\n` : showText(summary, colors));
      }),
    );

  return runs;
}
