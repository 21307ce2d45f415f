/**
 * End to end: `kforge serve` (the compiled CLI, as a user starts it) on a store holding a run like
 * the README's (a files replay: its model is a whole path; two candidates) beside the seeded demo
 * runs, read by Debian's Chromium as a person and a screenshot tool read it: the runs table at
 * 1280 px, the first paint (headless Chromium's `--dump-dom`, which serializes the page when
 * `--screenshot` would capture it), and the progress chart's ticks. Needs no PyTorch. Skipped,
 * saying why, without Chromium.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { browserUnavailable, CHROMIUM_PATH, openBrowser, type BrowserSession } from '../../../test-support/browser-session.js';
import { seedPlan } from '../../../test-support/seeded-store/seed-dashboard-store.js';
import { correct } from '../../../test-support/seeded-store/seed-results.js';
import { addLongFiguresRun, LONG_FIGURES_RUN } from '../../../test-support/seeded-store/seed-long-figures.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import type { ProblemRecord } from '../../store/run-store.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';

const skip = browserUnavailable() ?? false;
const WEB_DIST = path.join(REPOSITORY_ROOT, 'web', 'dist', 'index.html');
const RUN_ID = '20261207-060937-f7f4af';
const MODEL = 'files:/home/a-person/src/kforge/examples/replies/level1_02_gelu';

let seededStore: SeededTestStore;
let server: ChildProcess | undefined;
let base = '';
let browser: BrowserSession;
let readmeProblem: ProblemRecord;
let longFigures: { problemHash: string; candidateId: number };

/** `kforge serve --port 0` as a child process; its URL once it printed it. */
async function startServe(folder: string, storePath: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'serve', '--store', storePath, '--port', '0'], {
    cwd: folder,
    env: { ...process.env, KFORGE_LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((text) => text.startsWith('http://'));
      if (line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`kforge serve exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`kforge serve printed no URL within 60 s: ${stderr}`)), 60_000).unref();
  });
  return { child, url };
}

/** A run like the one the README's first line makes: one problem, two correct candidates, the second faster. */
async function addReadmeRun(store: SqliteRunStore, folder: string): Promise<void> {
  const problem = await store.upsertProblem({ name: '02_gelu', source: 'class Model: pass\n', path: path.join(folder, '02_gelu.py') });
  readmeProblem = problem;
  await store.createRun({
    id: RUN_ID,
    strategy: 'refine',
    model: MODEL,
    config: seedPlan({
      problems: [problem],
      backend: 'cpu',
      strategy: 'refine',
      workDirectory: folder,
      provider: 'files',
      model: MODEL.slice('files:'.length),
    }),
    problemHashes: [problem.hash],
  });
  // Wide figures, as a long run with a priced model has them.
  await store.recordModelCall({
    runId: RUN_ID,
    problemHash: problem.hash,
    round: 0,
    model: MODEL,
    messages: [{ role: 'user', content: 'Optimise 02_gelu.' }],
    replyText: 'A kernel.',
    inputTokens: 1_234_567,
    outputTokens: 98_765,
    latencyMs: 4000,
    costUsd: 123.45,
  });
  for (const [round, medianMs] of [
    [0, 53.4],
    [1, 14.4],
  ] as const) {
    const candidate = await store.addCandidate({ runId: RUN_ID, problemHash: problem.hash, round, source: `# candidate ${round}\n`, origin: 'files' });
    await store.recordEvaluation({
      candidateId: candidate.id,
      result: correct('cpu', { medianMs, eagerMs: 19.2, compileMs: null }),
      gpuSeconds: 18.9,
      optionsHash: 'readme',
      cacheKey: `readme-${round}`,
    });
  }
  // The replay's end, as the search records it.
  await store.recordEvent({
    runId: RUN_ID,
    problemHash: problem.hash,
    type: 'model-call-failed',
    payload: { round: 2, message: 'The files provider has served all 2 file(s).', exhausted: true },
  });
  await store.updateRunStatus(RUN_ID, 'finished');
}

before(async () => {
  if (skip) return;
  if (!existsSync(WEB_DIST)) {
    const build = spawnSync('bash', [path.join(REPOSITORY_ROOT, 'scripts', 'build-web.sh')], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, `building the web app failed: ${build.stderr}`);
  }
  seededStore = await openSeededTestStore('kforge-first-view-', { startIso: new Date(Date.now() - 5 * 3_600_000).toISOString() });
  await addReadmeRun(seededStore.store, seededStore.folder);
  longFigures = await addLongFiguresRun(seededStore.store, seededStore.folder);
  await seededStore.closeStore();
  const started = await startServe(seededStore.folder, seededStore.storePath);
  server = started.child;
  base = started.url.replace(/\/$/, '');
  browser = await openBrowser();
});

after(async () => {
  if (skip) return;
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGINT');
    await exited;
  }
  await seededStore?.cleanup();
});

/** The page as headless Chromium serializes it once loaded: what `chromium --headless --screenshot` captures. */
async function dumpDom(url: string): Promise<string> {
  const profile = mkdtempSync(path.join(tmpdir(), 'kforge-dump-dom-'));
  try {
    const { stdout } = await execa(
      CHROMIUM_PATH,
      ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`, '--window-size=1280,800', '--dump-dom', url],
      { timeout: 60_000 },
    );
    return stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * The tables in the candidate panel whose box, or whose content, reaches past the panel's right
 * edge at the window's width, or that need a scroll bar; and the page's own sideways scroll.
 */
async function tablesOutsidePanel(): Promise<{ tables: number; outside: string[]; page: [number, number] }> {
  return (await browser.page.evaluate(`(() => {
    const panel = document.querySelector('[data-testid=candidate-panel]');
    const edge = panel.getBoundingClientRect().right;
    const tables = [...panel.querySelectorAll('table')];
    const outside = [];
    for (const table of tables) {
      const name = table.dataset.testid || table.querySelector('th')?.textContent || 'table';
      const right = table.getBoundingClientRect().right;
      if (right > edge + 0.5) outside.push(name + ' ends at ' + right + ' px, the panel at ' + edge + ' px');
      for (let box = table.parentElement; box && box !== panel; box = box.parentElement) {
        if (box.scrollWidth > box.clientWidth) outside.push(name + ' is ' + box.scrollWidth + ' px wide in ' + box.clientWidth + ' px');
      }
    }
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) outside.push('the page scrolls sideways: ' + root.scrollWidth + ' px in ' + root.clientWidth + ' px');
    return { tables: tables.length, outside, page: [root.scrollWidth, root.clientWidth] };
  })()`)) as { tables: number; outside: string[]; page: [number, number] };
}

describe('the dashboard: first view, the runs table and the progress chart', { skip }, () => {
  it('paints the runs, and a run, without waiting for the API: the first frame is not "Loading runs…"', async () => {
    const runs = await dumpDom(`${base}/`);
    assert.match(runs, new RegExp(`data-testid="run-row-${RUN_ID}"`));
    assert.match(runs, /data-testid="run-row-cpu-demo"/);
    assert.doesNotMatch(runs, /Loading runs/);
    const run = await dumpDom(`${base}/runs/${RUN_ID}`);
    assert.match(run, /data-testid="problem-row-02_gelu"/);
    assert.doesNotMatch(run, /Loading run /);
    // The replay's normal end reads as such in the activity feed.
    assert.match(run, /no replies left on 02_gelu/);
    assert.doesNotMatch(run, /model call failed/);
  });

  it('shows the first view with every API request refused, and still follows the store afterwards', async () => {
    const { page } = browser;
    await page.route('**/api/**', (route) => route.abort());
    await page.goto(`${base}/`);
    assert.equal(await page.getByTestId(`run-row-${RUN_ID}`).count(), 1, 'the runs came with the page');
    await page.unrouteAll();
    await page.goto(`${base}/`);
    await page.getByTestId(`run-row-${RUN_ID}`).waitFor();
    // A run written after the page loaded (a search started meanwhile) appears: the page still asks the API.
    const writer = await SqliteRunStore.open({ path: seededStore.storePath, mustExist: true });
    try {
      const config = seedPlan({
        problems: [readmeProblem],
        backend: 'cpu',
        strategy: 'refine',
        workDirectory: seededStore.folder,
        provider: 'files',
        model: '/r',
      });
      await writer.createRun({ id: 'started-later', strategy: 'refine', model: 'files:/r', config, problemHashes: [readmeProblem.hash] });
    } finally {
      await writer.close();
    }
    await page.getByTestId('run-row-started-later').waitFor({ timeout: 20_000 });
  });

  it('fits the runs table in a 1280-px window: the last columns (cost, device time) are not cut off', async () => {
    const { page } = browser;
    await page.goto(`${base}/`);
    const row = page.getByTestId(`run-row-${RUN_ID}`);
    await row.waitFor();
    const right = async (selector: string): Promise<number> => {
      const box = await page.locator(selector).first().boundingBox();
      assert.ok(box, selector);
      return box.x + box.width;
    };
    const layout = {
      page: (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as [number, number],
      scroller: (await page.evaluate(`(() => { const t = document.querySelector('table.data').parentElement; return [t.scrollWidth, t.clientWidth]; })()`)) as [
        number,
        number,
      ],
      panel: await right('.panel'),
      table: await right('table.data'),
      cost: await right(`[data-testid="run-row-${RUN_ID}"] td:nth-last-child(2)`),
      device: await right(`[data-testid="run-row-${RUN_ID}"] td:last-child`),
    };
    assert.ok(layout.page[0] <= layout.page[1], `the page scrolls sideways: ${JSON.stringify(layout)}`);
    assert.ok(
      layout.table <= layout.panel && layout.device <= layout.panel && layout.cost < layout.device,
      `the table overflows its panel: ${JSON.stringify(layout)}`,
    );
    assert.ok(layout.scroller[0] <= layout.scroller[1], `the table needs a scroll bar at 1280 px: ${JSON.stringify(layout)}`);
    const cells = await row.locator('td').allInnerTexts();
    assert.equal(cells.at(-2), '$123.45');
    assert.equal(await row.locator('td.cut').getAttribute('title'), MODEL, 'the model, cut in the cell, is whole in its title');
  });

  it("numbers the progress chart's x axis in whole candidates", async () => {
    const { page } = browser;
    await page.goto(`${base}/runs/${RUN_ID}/problems/${readmeProblem.hash}`);
    const chart = page.getByTestId('chart-candidates').locator('.chart');
    await page.locator('[data-testid=chart-candidates] .chart[data-x-ticks]').waitFor();
    const ticks = (await chart.getAttribute('data-x-ticks'))!.split(' ');
    assert.deepEqual(ticks, ['1', '2'], 'two candidates: ticks at 1 and 2, none at 1.1, 1.2, …');
    const { problems } = seededStore.seeded;
    await page.goto(`${base}/runs/cpu-demo/problems/${problems.relu.hash}`);
    await page.locator('[data-testid=chart-candidates] .chart[data-x-ticks]').waitFor();
    const more = (await page.getByTestId('chart-candidates').locator('.chart').getAttribute('data-x-ticks'))!.split(' ');
    assert.ok(more.length >= 2 && more.every((tick) => /^\d+$/.test(tick)), more.join(' '));
  });

  it('holds every table of the candidate view inside its panel at 1280 px, long figures whole', async () => {
    const { page } = browser;
    await page.goto(`${base}/runs/${LONG_FIGURES_RUN}/problems/${longFigures.problemHash}?candidate=${longFigures.candidateId}`);
    await page.getByTestId('timing-table').waitFor();
    await page.getByTestId('shapes-table').waitFor();
    const overview = await tablesOutsidePanel();
    assert.equal(overview.tables, 2, 'the shapes and the timing table');
    assert.deepEqual(overview.outside, [], JSON.stringify(overview));
    const candidate = (await page.getByTestId('timing-table').locator('tbody tr').first().locator('td').allInnerTexts()).map((text) => text.trim());
    assert.deepEqual(candidate, ['candidate', '0.000987 ms', '', '0.00101 ms ± 0.0000396 ms', '0.000900 ms / 0.0122 ms', '1000000', '']);
    const eager = (await page.getByTestId('timing-table').locator('tbody tr').nth(1).locator('td').allInnerTexts()).map((text) => text.trim());
    assert.deepEqual([eager[1], eager.at(-1)], ['1.23 s', '1.25M×']);
    await page.getByTestId('tab-build').click();
    await page.getByTestId('build-view').waitFor();
    const build = await tablesOutsidePanel();
    assert.equal(build.tables, 1, "the build's kernel table");
    assert.deepEqual(build.outside, [], JSON.stringify(build));
  });

  it('logged no errors in the page', () => {
    assert.deepEqual(
      browser.errors.filter((text) => !/Failed to load resource/.test(text)),
      [],
    );
  });
});
