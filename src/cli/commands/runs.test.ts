import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { seedRun } from '../../../test-support/conformance/run-store/conformance-setup.js';
import { correctResult, failedResult } from '../../../test-support/evaluation-results.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { registerRunsCommand } from './runs.js';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const folder = mkdtempSync(join(tmpdir(), 'kforge-runs-cli-'));
after(() => rmSync(folder, { recursive: true, force: true }));

interface CliOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
}

/** Runs `kforge <args>` through a commander program holding only the runs command. */
async function kforge(args: string[], cwd = folder): Promise<CliOutcome> {
  const outcome: CliOutcome = { stdout: '', stderr: '', exitCode: undefined };
  const program = new Command().name('kforge').exitOverride();
  registerRunsCommand(program, {
    stdout: { write: (text: string) => (outcome.stdout += text) },
    stderr: { write: (text: string) => (outcome.stderr += text) },
    setExitCode: (code) => (outcome.exitCode = code),
    cwd,
    color: false,
  });
  await program.parseAsync(args, { from: 'user' });
  return outcome;
}

const storePath = join(folder, 'kforge.db');
let finishedRunId = '';

before(async () => {
  let clockMs = Date.parse('2026-03-01T09:00:00.000Z');
  const store = await SqliteRunStore.open({ path: storePath, now: () => new Date((clockMs += 1000)) });
  const { run, relu, softmax } = await seedRun(store, { id: 'run-a' });
  const add = async (problemHash: string, source: string) => store.addCandidate({ runId: run.id, problemHash, round: 0, source, origin: 'model' });
  const evaluate = async (candidateId: number, result: ReturnType<typeof correctResult>) =>
    store.recordEvaluation({ candidateId, result, gpuSeconds: 2, optionsHash: 'o', cacheKey: `k${candidateId}` });
  await evaluate((await add(relu.hash, 'a')).id, correctResult(1, { eagerMs: 3, compileMs: 2 }));
  await evaluate((await add(relu.hash, 'b')).id, failedResult('incorrect'));
  await evaluate((await add(softmax.hash, 'c')).id, failedResult('compile_error'));
  await store.recordModelCall({ runId: run.id, problemHash: relu.hash, model: 'fake:model', messages: [], inputTokens: 1500, outputTokens: 20, costUsd: 0.75 });
  await store.updateRunStatus(run.id, 'finished');
  finishedRunId = run.id;
  await seedRun(store, { id: 'run-b', strategy: 'ideas' });
  await store.close();
});

describe('kforge runs list', () => {
  it('prints one JSON object with every run and its summary, newest first', async () => {
    const { stdout, stderr, exitCode } = await kforge(['runs', 'list', '--json', '--store', storePath]);
    assert.equal(exitCode, undefined);
    assert.equal(stderr, '');
    const parsed = JSON.parse(stdout) as { store: string; runs: Array<{ id: string; status: string; totals: Record<string, unknown> }> };
    assert.equal(parsed.store, storePath);
    assert.deepEqual(
      parsed.runs.map((run) => [run.id, run.status]),
      [
        ['run-b', 'running'],
        ['run-a', 'finished'],
      ],
    );
    assert.deepEqual(
      [parsed.runs[1]?.totals.correct, parsed.runs[1]?.totals.evaluated, parsed.runs[1]?.totals.bestSpeedupVsBest, parsed.runs[1]?.totals.costUsd],
      [1, 3, 2, 0.75],
    );
  });

  it('prints a table with status, strategy, model, solved problems, correct share, best speedup, tokens and cost', async () => {
    const { stdout, exitCode } = await kforge(['runs', 'list', '--store', storePath]);
    assert.equal(exitCode, undefined);
    const [header, newest, oldest] = stdout.trimEnd().split('\n');
    assert.match(header ?? '', /^RUN\s+STATUS\s+STARTED\s+STRATEGY\s+MODEL\s+SOLVED\s+CORRECT\s+BEST\s+TOKENS IN\/OUT\s+COST$/);
    assert.match(newest ?? '', /^run-b\s+running\s+2026-03-01 09:00 UTC\s+ideas\s+fake:model\s+0\/2\s+-\s+-\s+0\/0\s+-$/);
    assert.match(oldest ?? '', /^run-a\s+finished\s+2026-03-01 09:00 UTC\s+refine\s+fake:model\s+1\/2\s+1\/3 33%\s+2\.00x\s+1\.5k\/20\s+\$0\.75$/);
  });

  it('says how to start a run when the store has none', async () => {
    const empty = join(folder, 'empty.db');
    await (await SqliteRunStore.open({ path: empty })).close();
    const { stdout, exitCode } = await kforge(['runs', 'list', '--store', empty]);
    assert.equal(exitCode, undefined);
    assert.match(stdout, /^no runs in .*empty\.db yet: start one with `kforge optimize`\n$/);
  });

  it('takes a relative --store from the working directory, and defaults to .kforge/kforge.db', async () => {
    const project = join(folder, 'project');
    mkdirSync(join(project, '.kforge'), { recursive: true });
    await (await SqliteRunStore.open({ path: join(project, '.kforge', 'kforge.db') })).close();
    const implicit = await kforge(['runs', 'list', '--json'], project);
    assert.equal((JSON.parse(implicit.stdout) as { store: string }).store, join(project, '.kforge', 'kforge.db'));
    const relative = await kforge(['runs', 'list', '--json', '--store', '../kforge.db'], project);
    assert.equal((JSON.parse(relative.stdout) as { runs: unknown[] }).runs.length, 2);
  });

  it('exits 2 with one actionable line, and creates nothing, when the store is missing', async () => {
    const missing = join(folder, 'nowhere', 'kforge.db');
    const { stdout, stderr, exitCode } = await kforge(['runs', 'list', '--json', '--store', missing]);
    assert.equal(exitCode, 2);
    assert.equal(stdout, '');
    assert.equal(stderr, `kforge runs: no kforge store at ${missing}: run \`kforge optimize\` first, or pass --store PATH to the database it wrote\n`);
    assert.equal(existsSync(join(folder, 'nowhere')), false);
  });

  it('exits 2 when the store was written by a newer kforge', async () => {
    const newer = join(folder, 'newer.db');
    await (await SqliteRunStore.open({ path: newer })).close();
    const raw = new Database(newer);
    raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0099_future', new Date().toISOString());
    raw.close();
    const { stdout, stderr, exitCode } = await kforge(['runs', 'list', '--store', newer]);
    assert.equal(exitCode, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^kforge runs: the kforge store at .*newer\.db was written by a newer kforge .*upgrade kforge.*\n$/);
    assert.equal(stderr.split('\n').length, 2);
  });
});

describe('kforge runs show', () => {
  it('prints the run and, per problem, candidates, best verdict, speedups and events', async () => {
    const { stdout, exitCode } = await kforge(['runs', 'show', finishedRunId, '--store', storePath]);
    assert.equal(exitCode, undefined);
    assert.match(stdout, /^run run-a {2}finished\n/);
    assert.match(stdout, /strategy refine {3}model fake:model/);
    assert.match(stdout, /candidates 3 \(3 evaluated, 1 correct, 33%\) {3}best 2\.00x {3}tokens 1\.5k in \/ 20 out {3}cost \$0\.75 {3}GPU 6\.0 s/);
    const rows = stdout.trimEnd().split('\n').slice(-3);
    assert.match(rows[0] ?? '', /^PROBLEM\s+HASH\s+CANDIDATES\s+EVALUATED\s+CORRECT\s+BEST VERDICT\s+BEST\s+VS EAGER\s+VS COMPILE\s+MEDIAN MS\s+EVENTS$/);
    assert.match(rows[1] ?? '', /^19_ReLU\s+[0-9a-f]{12}\s+2\s+2\s+1\s+correct\s+2\.00x\s+3\.00x\s+2\.00x\s+1\.000\s+4$/);
    assert.match(rows[2] ?? '', /^23_Softmax\s+[0-9a-f]{12}\s+1\s+1\s+0\s+compile_error\s+-\s+-\s+-\s+-\s+2$/);
  });

  it('prints one JSON object with --json', async () => {
    const { stdout, stderr } = await kforge(['runs', 'show', finishedRunId, '--json', '--store', storePath]);
    assert.equal(stderr, '');
    const parsed = JSON.parse(stdout) as { run: { id: string; problems: Array<{ name: string; bestVerdict: string; events: number }> } };
    assert.equal(parsed.run.id, 'run-a');
    assert.deepEqual(
      parsed.run.problems.map((problem) => [problem.name, problem.bestVerdict, problem.events]),
      [
        ['19_ReLU', 'correct', 4],
        ['23_Softmax', 'compile_error', 2],
      ],
    );
  });

  it('exits 2 with one line naming the run and how to list ids when the run is unknown', async () => {
    const { stdout, stderr, exitCode } = await kforge(['runs', 'show', 'no-such-run', '--json', '--store', storePath]);
    assert.equal(exitCode, 2);
    assert.equal(stdout, '');
    assert.equal(stderr, `kforge runs: no run \`no-such-run\` in ${storePath}: \`kforge runs list --store ${storePath}\` shows the run ids\n`);
  });
});

describe('kforge runs in a real process', () => {
  const script = [
    "import { Command } from 'commander';",
    "import { registerRunsCommand } from './src/cli/commands/runs.ts';",
    "const program = new Command().name('kforge');",
    'registerRunsCommand(program);',
    'await program.parseAsync(process.argv.slice(1), { from: "user" });',
  ].join('\n');
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...args], { cwd: repositoryRoot, encoding: 'utf8' });

  it('writes only the JSON object to stdout and exits 0', () => {
    const child = run(['runs', 'show', 'run-a', '--json', '--store', storePath]);
    assert.equal(child.status, 0, child.stderr);
    assert.equal((JSON.parse(child.stdout) as { run: { id: string } }).run.id, 'run-a');
  });

  it('exits 2 for a missing store', () => {
    const child = run(['runs', 'list', '--store', join(folder, 'absent.db')]);
    assert.equal(child.status, 2);
    assert.equal(child.stdout, '');
    assert.match(child.stderr, /^kforge runs: no kforge store at /);
  });

  it('works through bin/kforge.js', () => {
    const child = spawnSync(process.execPath, ['bin/kforge.js', 'runs', 'list', '--json', '--store', storePath], { cwd: repositoryRoot, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.equal((JSON.parse(child.stdout) as { runs: unknown[] }).runs.length, 2);
  });
});
