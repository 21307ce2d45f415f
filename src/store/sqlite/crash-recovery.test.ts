import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { correctResult } from '../../../test-support/evaluation-results.js';
import { SqliteRunStore } from './sqlite-run-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = resolve(here, '..', '..', '..');
const CRASH_WRITER = join(repositoryRoot, 'test-support', 'fixtures', 'programs', 'crash-writer.ts');
const CRASH_RUN_ID = 'crash-run';
const folder = mkdtempSync(join(tmpdir(), 'kforge-crash-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/**
 * Runs the crash writer and SIGKILLs it as soon as `shouldKill` accepts a line of its output.
 * Returns every line it printed and the signal it died of.
 */
async function runUntilKilled(path: string, mode: 'search' | 'hold', shouldKill: (line: string, lines: string[]) => boolean) {
  const child = spawn(process.execPath, ['--import', 'tsx', CRASH_WRITER, path, mode, CRASH_RUN_ID], {
    cwd: repositoryRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
  const lines: string[] = [];
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line);
    if (shouldKill(line, lines)) {
      child.kill('SIGKILL');
      break;
    }
  }
  const signal = await exited;
  clearTimeout(timer);
  assert.equal(signal, 'SIGKILL', `the writer should have been killed, not exited: ${stderr}`);
  return lines;
}

const idsOf = (lines: string[], word: string): number[] =>
  lines.filter((line) => line.startsWith(`${word} `)).map((line) => Number(line.slice(word.length + 1)));

describe('a store after its writer is killed with SIGKILL', () => {
  it('loses no finished evaluation, duplicates none, and pendingWork resumes exactly the rest', async () => {
    const path = join(folder, 'search.db');
    const lines = await runUntilKilled(path, 'search', (_line, seen) => idsOf(seen, 'evaluated').length >= 12);
    const reported = idsOf(lines, 'evaluated');

    const store = await SqliteRunStore.open({ path, mustExist: true });
    const candidates = await store.listCandidates(CRASH_RUN_ID);
    const evaluated = candidates.filter((candidate) => candidate.evaluation !== undefined);
    for (const id of reported) {
      const stored = candidates.find((candidate) => candidate.id === id);
      assert.equal(stored?.evaluation?.cacheKey, `key-${id}`, `evaluation of candidate ${id} was reported but is missing`);
    }
    assert.ok(idsOf(lines, 'added').every((id) => candidates.some((candidate) => candidate.id === id)));
    const pending = await store.pendingWork(CRASH_RUN_ID);
    assert.deepEqual(
      pending.map((candidate) => candidate.id),
      candidates.filter((candidate) => candidate.evaluation === undefined).map((candidate) => candidate.id),
    );
    assert.ok(pending.length >= 4, 'every third candidate was left unevaluated');
    const evaluatedEvents = await store.listEvents(CRASH_RUN_ID, { types: ['candidate-evaluated'] });
    assert.deepEqual(
      evaluatedEvents.map((event) => event.payload.candidateId),
      evaluated.map((candidate) => candidate.id),
    );

    // Resume: evaluate what is pending, and (as a careless resume would) record a finished one again.
    for (const candidate of pending) {
      const outcome = await store.recordEvaluation({
        candidateId: candidate.id,
        result: correctResult(3, { eagerMs: 6, compileMs: 6 }),
        gpuSeconds: 1,
        optionsHash: 'o',
        cacheKey: `key-${candidate.id}`,
      });
      assert.equal(outcome.created, true);
    }
    const again = await store.recordEvaluation({
      candidateId: reported[0]!,
      result: correctResult(3, { eagerMs: 6, compileMs: 6 }),
      gpuSeconds: 1,
      optionsHash: 'o',
      cacheKey: 'x',
    });
    assert.equal(again.created, false);
    assert.deepEqual(await store.pendingWork(CRASH_RUN_ID), []);
    const summary = await store.getRunSummary(CRASH_RUN_ID);
    assert.equal(summary?.totals.evaluated, candidates.length);
    assert.equal((await store.listEvents(CRASH_RUN_ID, { types: ['candidate-evaluated'] })).length, candidates.length);
    await store.close();
  });

  it('drops a transaction that never committed and leaves the file writable', async () => {
    const path = join(folder, 'hold.db');
    const seed = await SqliteRunStore.open({ path });
    const problem = await seed.upsertProblem({ name: 'p', source: 'class Model: pass' });
    await seed.createRun({ id: 'held', strategy: 'sample', model: 'm', config: {}, problemHashes: [problem.hash] });
    await seed.close();
    await runUntilKilled(path, 'hold', (line) => line === 'holding');

    const store = await SqliteRunStore.open({ path, mustExist: true, busyTimeoutMs: 1000 });
    assert.deepEqual(await store.listCandidates('held'), []);
    assert.equal(await store.findEvaluationByCacheKey('uncommitted'), undefined);
    const candidate = await store.addCandidate({ runId: 'held', problemHash: problem.hash, round: 0, source: 'after', origin: 'model' });
    assert.deepEqual(
      (await store.pendingWork('held')).map((item) => item.id),
      [candidate.id],
    );
    await store.close();
  });
});
