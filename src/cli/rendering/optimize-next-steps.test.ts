import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import type { RunReport } from '../../agent/report/run-report.js';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { nextSteps } from './optimize-next-steps.js';

const CWD = '/home/me/work';
const DEFAULT_STORE = path.join(CWD, '.kforge', 'kforge.db');

function report(status: RunReport['status'], problems: Array<[string, 'correct' | 'incorrect' | null]>): RunReport {
  return {
    runId: '20261207-061317-a333d5',
    status,
    problems: problems.map(([name, verdict]) => ({
      name,
      path: `/suite/${name}.py`,
      hash: 'h',
      candidateCount: 1,
      evaluatedCount: 1,
      correctCount: verdict === 'correct' ? 1 : 0,
      best:
        verdict === null
          ? null
          : {
              candidateId: 1,
              verdict,
              result: {} as never,
              kernelPath: path.join(CWD, 'kforge-out', `${name}.py`),
              verdictPath: path.join(CWD, 'kforge-out', `${name}.verdict.json`),
            },
      usage: {} as never,
      endReason: null,
    })),
    metrics: {} as never,
    levels: [],
    totals: { candidates: 1, tokens: 0, costUsd: 0, deviceMs: 0 },
  };
}

describe('nextSteps', () => {
  it('names the best kernel and its verdict, then the report and the dashboard', () => {
    assert.equal(
      nextSteps(report('finished', [['02_gelu', 'correct']]), { storePath: DEFAULT_STORE, cwd: CWD }),
      [
        'best kernel: kforge-out/02_gelu.py',
        '  its verdict: kforge-out/02_gelu.verdict.json',
        "next: kforge report 20261207-061317-a333d5   the run's verdicts and speed-ups",
        '      kforge serve                           the dashboard (127.0.0.1:4319)',
        '',
      ].join('\n'),
    );
  });

  it("marks a kernel that is not correct, names the folder for many, and carries a store that is not the default's", () => {
    const text = nextSteps(report('finished', [['01_relu', 'incorrect']]), { storePath: '/data/runs.db', cwd: CWD });
    assert.match(
      text,
      /^best kernel: kforge-out\/01_relu\.py — incorrect, the furthest any candidate got\n {2}its verdict: kforge-out\/01_relu\.verdict\.json$/m,
    );
    // Too wide for 80 columns side by side: each description goes on a line of its own.
    assert.match(text, /^next: kforge report 20261207-061317-a333d5 --store \/data\/runs\.db\n {8}the run's verdicts and speed-ups$/m);
    assert.match(text, /^ {6}kforge serve --store \/data\/runs\.db\n {8}the dashboard/m);
    assert.ok(
      text.split('\n').every((line) => line.length <= 80),
      text,
    );
    const wide = nextSteps(report('finished', [['01_relu', 'incorrect']]), { storePath: '/data/runs.db', cwd: CWD, widthColumns: 200 });
    assert.match(wide, /^best kernel: kforge-out\/01_relu\.py \(its verdict: kforge-out\/01_relu\.verdict\.json\) — incorrect/m);
    assert.match(wide, /^next: kforge report 20261207-061317-a333d5 --store \/data\/runs\.db {3}the run's verdicts/m);
    const many = nextSteps(
      report('finished', [
        ['a', 'correct'],
        ['b', 'correct'],
        ['c', 'incorrect'],
        ['d', null],
        ['e', 'correct'],
      ]),
      { storePath: DEFAULT_STORE, cwd: CWD },
    );
    assert.match(many, /^best kernels: 4 in kforge-out\/ \(PROBLEM\.py and PROBLEM\.verdict\.json each; 3 correct\)$/m);
  });

  it('puts the resume first for a stopped run', () => {
    const text = nextSteps(report('stopped', [['02_gelu', null]]), { storePath: DEFAULT_STORE, cwd: CWD });
    assert.match(
      text,
      /^no kernel was written: no candidate was evaluated\nnext: kforge optimize --resume 20261207-061317-a333d5\n {8}go on where it stopped\n/,
    );
  });
});

/** The README's run as a user makes it, on the compiled CLI: the files provider and the fake worker. */
describe('after kforge optimize, the compiled CLI says what to do next, and those commands work', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'kforge-next-'));
  after(() => rmSync(folder, { recursive: true, force: true }));
  mkdirSync(path.join(folder, 'replies'));
  writeFileSync(path.join(folder, '02_gelu.py'), '# A problem the fake reference accepts.\nbatch_size = 4\n\n\nclass Model: pass\n');
  writeFileSync(
    path.join(folder, 'replies', '1.py'),
    '```python\nimport torch\n# fake-verdict: correct 0.5\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n```\n',
  );
  const kforge = (...args: string[]) =>
    execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), ...args], {
      reject: false,
      cwd: folder,
      env: { KFORGE_PYTHON: TEST_PYTHON, KFORGE_WORKER_DIR: fixturePath('fake-worker'), KFORGE_CACHE_DIR: path.join(folder, 'cache'), NO_COLOR: '1' },
      timeout: 300_000,
    });

  it('names the best kernel, kforge report RUN_ID and kforge serve; the report it names runs', async () => {
    const run = await kforge('optimize', '02_gelu.py', '--provider', 'files', '--dir', 'replies', '--backend', 'cpu');
    assert.equal(run.exitCode, 0, String(run.stderr));
    const stderr = String(run.stderr);
    const runId = /event=run-started run=(\S+)/.exec(stderr)?.[1];
    assert.ok(runId, stderr);
    assert.match(stderr, /^best kernel: kforge-out\/02_gelu\.py\n {2}its verdict: kforge-out\/02_gelu\.verdict\.json$/m);
    assert.match(stderr, new RegExp(`^next: kforge report ${runId} +the run's verdicts and speed-ups`, 'm'));
    assert.match(stderr, /^ {6}kforge serve +the dashboard \(127\.0\.0\.1:4319\)/m);
    const reported = await kforge('report', runId);
    assert.equal(reported.exitCode, 0, String(reported.stderr));
    assert.match(String(reported.stdout), /02_gelu/);
  });

  it('answers a mistyped --provider with the one meant', async () => {
    const typo = await kforge('optimize', '02_gelu.py', '--provider', 'fle', '--dir', 'replies', '--backend', 'cpu');
    assert.equal(typo.exitCode, 2);
    assert.match(String(typo.stderr), /^kforge optimize: expected `--provider` to be one of .*, got `fle` \(did you mean --provider files\?\)$/m);
  });
});
