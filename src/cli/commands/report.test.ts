import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { registerReportCommand } from './report.js';

let seededStore: SeededTestStore;

before(async () => {
  seededStore = await openSeededTestStore('kforge-report-cli-');
  await seededStore.closeStore();
});
after(() => seededStore.cleanup());

/** Runs `kforge report ARGS` in the seeded store's folder. */
async function report(args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  const outcome = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().name('kforge').exitOverride();
  registerReportCommand(program, {
    stdout: { write: (text: string) => (outcome.stdout += text) },
    stderr: { write: (text: string) => (outcome.stderr += text) },
    setExitCode: (code) => (outcome.exitCode = code),
    environment: {},
    cwd: seededStore.folder,
    now: () => new Date('2026-03-03T08:00:00.000Z'),
  });
  await program.parseAsync(['report', ...args], { from: 'user' });
  return outcome;
}

describe('kforge report', () => {
  it('prints Markdown by default', async () => {
    const outcome = await report(['cpu-demo', '--store', 'kforge.db']);
    assert.equal(outcome.exitCode, 0);
    assert.match(outcome.stdout, /^# kforge report: run cpu-demo\n/);
    assert.match(outcome.stdout, /\| all \| 3\/3 \| 100% \/ 100% \| 100% \/ 100% \| 100% \/ 67% \| 100% \/ 33% \|/);
    assert.equal(outcome.stderr, '');
  });

  it('prints JSON and CSV', async () => {
    const json = JSON.parse((await report(['h200-demo', '--store', 'kforge.db', '--format', 'json'])).stdout) as {
      run: { id: string; backend: string };
      problems: unknown[];
    };
    assert.deepEqual([json.run.id, json.run.backend, json.problems.length], ['h200-demo', 'cuda', 3]);
    const csv = (await report(['h200-demo', '--store', 'kforge.db', '--format', 'csv'])).stdout;
    assert.equal(csv.trimEnd().split('\r\n').length, 1 + 3 + 2 + 1);
  });

  it('writes a self-contained HTML file with --out', async () => {
    const outcome = await report(['cpu-demo', '--store', 'kforge.db', '--format', 'html', '--out', 'report.html']);
    assert.equal(outcome.exitCode, 0);
    assert.equal(outcome.stdout, '');
    assert.match(outcome.stderr, /html report of run cpu-demo written to .*report\.html/);
    const html = await readFile(path.join(seededStore.folder, 'report.html'), 'utf8');
    assert.match(html, /<svg /);
    assert.doesNotMatch(html, /<script|src="http/);
  });

  it('exits 2 with a way forward for an unknown run, a missing store and a bad format', async () => {
    const unknown = await report(['nope', '--store', 'kforge.db']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /no run `nope` in .*kforge runs list/);
    const missing = await report(['cpu-demo', '--store', 'missing.db']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /no kforge store at .*missing\.db: run `kforge optimize` first/);
    const format = await report(['cpu-demo', '--store', 'kforge.db', '--format', 'pdf']);
    assert.deepEqual([format.exitCode, format.stderr.trim()], [2, 'kforge report: expected `--format` to be one of md, html, csv, json, got `pdf`']);
  });
});
