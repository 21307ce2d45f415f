/**
 * End to end: `kforge serve` on a store filled through the RunStore API (two runs shaped like a
 * cpu and a CUDA search, plus a tiny pure-PyTorch run for the edit step), driven through Debian's
 * Chromium with playwright-core: open a run, open a candidate, see its diff, add a hint, edit and
 * evaluate a candidate (the real PythonEvaluator on the cpu backend with a pure-PyTorch problem
 * and candidate: no build, 10–30 s; the guard rejects PyTorch arithmetic, so the verdict is
 * `rejected` with its reasons), accept a kernel — each result checked in the store. Screenshots of the main pages at 1280×800 go to
 * `$KFORGE_SCREENSHOTS` (`bash scripts/screenshots.sh` refreshes the committed ones in docs/screenshots), else a temporary folder.
 * Skipped, saying why, without Chromium or without a Python that has PyTorch.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { browserUnavailable, openBrowser, type BrowserSession } from '../../../test-support/browser-session.js';
import { seedPlan } from '../../../test-support/seeded-store/seed-dashboard-store.js';
import type { ShapeOutcome } from '../../core/verdict.js';
import { correct, incorrect } from '../../../test-support/seeded-store/seed-results.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { torchUnavailable } from '../../../test-support/torch-python.js';

const skip = browserUnavailable() ?? torchUnavailable(TEST_PYTHON);

const shotsFolder = process.env.KFORGE_SCREENSHOTS ? path.resolve(REPOSITORY_ROOT, process.env.KFORGE_SCREENSHOTS) : null;
const WEB_DIST = path.join(REPOSITORY_ROOT, 'web', 'dist', 'index.html');

let seededStore: SeededTestStore;
let server: ChildProcess | undefined;
let base = '';
let browser: BrowserSession;
let reader: SqliteRunStore;
let editRoot = 0;
/** The run of a problem folder (docs/problems.md) and its two candidates: a correct sweep and one failing at shape 2. */
const folderRun = { id: 'e2e-folder', problemHash: '', correctId: 0, failingId: 0 };

const FOLDER_SHAPES: Array<Pick<ShapeOutcome, 'index' | 'values' | 'overrides' | 'unused'>> = [
  { index: 0, values: { rows: 8, cols: 64 }, overrides: { ROWS: 8, COLS: 64 }, unused: [] },
  { index: 1, values: { rows: 16, cols: 128 }, overrides: { ROWS: 16, COLS: 128 }, unused: [] },
  { index: 2, values: { rows: 4, cols: 300, wide: true }, overrides: { ROWS: 4, COLS: 300 }, unused: ['wide'] },
];

/** A timed shape: the candidate's and eager's medians in ms (no torch.compile on this host). */
function timedShape(shape: (typeof FOLDER_SHAPES)[number], medianMs: number, eagerMs: number): ShapeOutcome {
  const vsEager = eagerMs / medianMs;
  const timing = {
    candidate_median_ms: medianMs,
    eager_median_ms: eagerMs,
    compile_median_ms: null,
    speedup_vs_eager: vsEager,
    speedup_vs_compile: null,
    speedup_vs_best: vsEager,
  };
  return { ...shape, verdict: 'correct' as const, reasons: [], max_abs_error: 2.4e-7, max_rel_error: 1.1e-6, timing };
}

/** A run over the scale-shift problem folder, stored as `kforge optimize` stores a sweep's results. */
async function addFolderRun(store: SeededTestStore['store'], folder: string): Promise<void> {
  const referencePath = fixturePath('problem-folders', 'scale-shift', 'reference.py');
  const problem = await store.upsertProblem({ name: 'scale-shift', source: readFileSync(referencePath, 'utf8'), path: referencePath });
  folderRun.problemHash = problem.hash;
  await store.createRun({
    id: folderRun.id,
    strategy: 'refine',
    model: 'files:scripted',
    config: seedPlan({ problems: [problem], backend: 'cpu', strategy: 'refine', workDirectory: folder, provider: 'files', model: 'scripted' }),
    problemHashes: [problem.hash],
  });
  const source = readFileSync(fixturePath('problem-folders', 'candidates', 'scale-shift-cpp.py'), 'utf8');
  const fast = await store.addCandidate({ runId: folderRun.id, problemHash: problem.hash, round: 0, source, origin: 'files' });
  const shapes = [timedShape(FOLDER_SHAPES[0]!, 0.02, 0.03), timedShape(FOLDER_SHAPES[1]!, 0.025, 0.05), timedShape(FOLDER_SHAPES[2]!, 0.03, 0.03)];
  const vsEager = Math.cbrt(1.5 * 2 * 1);
  const sweep = correct('cpu', { medianMs: 0.02, eagerMs: 0.03, compileMs: null });
  if (sweep.verdict !== 'correct' || !sweep.timing) throw new Error('expected a timed correct result');
  await store.recordEvaluation({
    candidateId: fast.id,
    result: {
      ...sweep,
      timing: { ...sweep.timing, speedup_vs_eager: vsEager, speedup_vs_compile: null, speedup_vs_best: vsEager },
      shapes,
      shape_geomean: { shapes: 3, speedup_vs_eager: vsEager, speedup_vs_compile: null, speedup_vs_best: vsEager },
    },
    gpuSeconds: 6,
    optionsHash: 'seed',
    cacheKey: 'e2e-folder-fast',
  });
  const narrowSource = readFileSync(fixturePath('problem-folders', 'candidates', 'scale-shift-narrow.py'), 'utf8');
  const narrow = await store.addCandidate({
    runId: folderRun.id,
    problemHash: problem.hash,
    round: 1,
    source: narrowSource,
    origin: 'files',
    parentId: fast.id,
  });
  const message = 'the output: 1200 of 1200 elements differ by more than atol 0.0001 + rtol 0.0001·|reference| (max abs error 2.1, first at index (0, 256))';
  const nan = 'the output has 12 NaN/Inf values where the reference is finite (first at index (3, 5))';
  const failingAt1 = {
    ...FOLDER_SHAPES[1]!,
    verdict: 'incorrect' as const,
    reasons: [{ check: 'nan', message: nan }],
    max_abs_error: null,
    max_rel_error: null,
  };
  const failingAt2 = { ...FOLDER_SHAPES[2]!, verdict: 'incorrect' as const, reasons: [{ check: 'mismatch', message }], max_abs_error: 2.1, max_rel_error: 0.9 };
  const wrong = incorrect('cpu', { maxAbsError: 2.1, maxRelError: 0.9, mismatched: 1200, numel: 1200, message });
  await store.recordEvaluation({
    candidateId: narrow.id,
    result: {
      ...wrong,
      reasons: [{ check: 'nan', message: `shape 1 (rows=16, cols=128): ${nan}` }],
      shapes: [timedShape(FOLDER_SHAPES[0]!, 0.02, 0.03), failingAt1, failingAt2],
    },
    gpuSeconds: 5,
    optionsHash: 'seed',
    cacheKey: 'e2e-folder-narrow',
  });
  await store.updateRunStatus(folderRun.id, 'finished');
  folderRun.correctId = fast.id;
  folderRun.failingId = narrow.id;
}

/** `kforge serve` as a child process: the compiled binary, as a user starts it. */
async function startServe(folder: string, storePath: string): Promise<{ child: ChildProcess; url: string }> {
  const command = [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js')];
  const child = spawn(process.execPath, [...command, 'serve', '--store', storePath, '--port', '0'], {
    cwd: folder,
    env: { ...process.env, KFORGE_PYTHON: TEST_PYTHON, KFORGE_LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
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

async function screenshot(name: string, scrollY = 0): Promise<void> {
  await browser.page.evaluate(`window.scrollTo(0, ${scrollY})`);
  const folder = shotsFolder ?? path.join(seededStore.folder, 'screenshots');
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `${name}.png`);
  await browser.page.waitForTimeout(400);
  await browser.page.screenshot({ path: file });
  assert.ok((await stat(file)).size > 10_000, `${name}.png holds a picture`);
}

before(async () => {
  if (skip) return;
  if (!existsSync(WEB_DIST)) {
    const build = spawnSync('bash', [path.join(REPOSITORY_ROOT, 'scripts', 'build-web.sh')], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, `building the web app failed: ${build.stderr}`);
  }
  seededStore = await openSeededTestStore('kforge-e2e-', { startIso: new Date(Date.now() - 5 * 3_600_000).toISOString() });
  const { store, folder } = seededStore;
  const problemFile = fixturePath('problems', 'scale-add.py');
  const problem = await store.upsertProblem({ name: 'scale-add', source: readFileSync(problemFile, 'utf8'), path: problemFile });
  await store.createRun({
    id: 'e2e-scale-add',
    strategy: 'refine',
    model: 'files:scripted',
    config: seedPlan({ problems: [problem], backend: 'cpu', strategy: 'refine', workDirectory: folder, provider: 'files', model: 'scripted', perfTrials: 20 }),
    problemHashes: [problem.hash],
  });
  const root = await store.addCandidate({
    runId: 'e2e-scale-add',
    problemHash: problem.hash,
    round: 0,
    source: readFileSync(fixturePath('candidates', 'scale-add-correct.py'), 'utf8'),
    origin: 'files',
  });
  await store.recordEvaluation({
    candidateId: root.id,
    result: correct('cpu', { medianMs: 0.018, eagerMs: 0.014, compileMs: null }),
    gpuSeconds: 20,
    optionsHash: 'seed',
    cacheKey: 'e2e-root',
  });
  await store.updateRunStatus('e2e-scale-add', 'finished');
  editRoot = root.id;
  await addFolderRun(store, folder);
  await seededStore.closeStore();
  const started = await startServe(folder, seededStore.storePath);
  server = started.child;
  base = started.url.replace(/\/$/, '');
  reader = await SqliteRunStore.open({ path: seededStore.storePath, mustExist: true });
  browser = await openBrowser();
});

after(async () => {
  if (skip) return;
  await browser?.close();
  await reader?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGINT');
    await exited;
  }
  await seededStore?.cleanup();
});

describe('the dashboard in a browser', { skip }, () => {
  it('lists the runs and opens one', async () => {
    const { page } = browser;
    await page.goto(`${base}/`);
    await page.getByTestId('run-row-cpu-demo').waitFor();
    assert.equal(await page.getByTestId('run-row-h200-demo').count(), 1);
    await screenshot('runs');
    await page.getByRole('link', { name: 'cpu-demo', exact: true }).click();
    await page.getByRole('heading', { name: /Run cpu-demo/ }).waitFor();
    await page.getByTestId('problem-row-01_relu').waitFor();
    assert.match(page.url(), /\/runs\/cpu-demo$/);
    await screenshot('run');
    // News written by another process (the search) reaches the open page through the live stream.
    await reader.recordEvent({ runId: 'cpu-demo', type: 'problem-stalled', problemHash: seededStore.seeded.problems.fused.hash, payload: { after: 4 } });
    await page.locator('.feed').getByText('problem stalled on 03_bias_silu_scale_clamp').waitFor({ timeout: 15_000 });
  });

  it('opens a candidate and shows its verdict, code and diff against its parent', async () => {
    const { page } = browser;
    const ids = seededStore.seeded.ids;
    await page.getByRole('link', { name: '01_relu' }).click();
    await page.getByTestId(`tree-node-${ids.reluOmp}`).click();
    await page.getByText(`Candidate #${ids.reluOmp}`, { exact: true }).waitFor();
    await page.getByTestId('timing-table').waitFor();
    await screenshot('problem');
    await page.getByTestId('tab-diff').click();
    await page.locator('.d2h-wrapper').waitFor();
    assert.match(await page.locator('.d2h-wrapper').innerText(), /#pragma omp parallel for schedule\(static\)/);
    assert.match(await page.getByTestId('diff-summary').innerText(), new RegExp(`candidate-${ids.reluSerial}\\.py → candidate-${ids.reluOmp}\\.py`));
    await screenshot('candidate-diff', 340);
    await page.getByTestId('tab-code').click();
    await page.locator('[data-testid=candidate-code] span[style*="color"]').first().waitFor();
  });

  it('adds a hint for the problem, stored for the search to read', async () => {
    const { page } = browser;
    await page.getByTestId('hint-input').fill('Try 16-wide chunks with aligned loads.');
    await page.getByTestId('add-hint').click();
    await page.getByTestId('hint-list').getByText('Try 16-wide chunks with aligned loads.').waitFor();
    const hints = await reader.listHints('cpu-demo', seededStore.seeded.problems.relu.hash);
    assert.equal(hints.at(-1)?.note, 'Try 16-wide chunks with aligned loads.');
    assert.equal(hints.at(-1)?.problemHash, seededStore.seeded.problems.relu.hash);
  });

  it('accepts a correct kernel with a note', async () => {
    const { page } = browser;
    const chosen = seededStore.seeded.ids.reluChunked!;
    // The tree works from the keyboard: Enter selects the focused row, the arrow keys move between rows.
    const row = page.getByTestId(`tree-node-${chosen}`);
    await row.focus();
    await page.keyboard.press('Enter');
    await page.getByText(`Candidate #${chosen}`, { exact: true }).waitFor();
    assert.equal(await row.getAttribute('tabindex'), '0', "the selected row is the tree's tab stop");
    const above = await row.evaluate((element) => element.previousElementSibling?.getAttribute('data-testid') ?? null);
    assert.ok(above, 'a row above the chosen one');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.locator(':focus').getAttribute('data-testid'), above);
    await page.getByTestId('accept-open').click();
    await page.getByTestId('accept-note').fill('vectorised, tail handled; ship it');
    await page.getByTestId('accept').click();
    await page.locator('.chip.accepted', { hasText: 'vectorised, tail handled; ship it' }).waitFor();
    const accepted = (await reader.listActions('cpu-demo', { types: ['accept'] })).at(-1);
    assert.deepEqual([accepted?.candidateId, accepted?.note], [chosen, 'vectorised, tail handled; ship it']);
  });

  it('edits a candidate and evaluates it as a new one, written by a person', async () => {
    const { page } = browser;
    const problem = (await reader.listRunProblems('e2e-scale-add'))[0]!;
    await page.goto(`${base}/runs/e2e-scale-add/problems/${problem.hash}?candidate=${editRoot}`);
    await page.getByTestId('tab-edit').click();
    const editor = page.getByTestId('candidate-editor');
    const original = await editor.inputValue();
    const edited = original.replace(
      'return (x * self.scale + self.bias).clamp_min(0.0)',
      'return (self.bias + x * self.scale).clamp_min(0.0)  # edited in the dashboard',
    );
    assert.notEqual(edited, original);
    await editor.fill(edited);
    await page.getByTestId('evaluate-edit').click();
    await page.waitForURL((url) => url.searchParams.get('candidate') !== String(editRoot));
    const editedId = Number(new URL(page.url()).searchParams.get('candidate'));
    assert.notEqual(editedId, editRoot);
    await page.getByText(`Candidate #${editedId}`, { exact: true }).waitFor();
    await page.locator('.candidate-head .badge.verdict').waitFor({ timeout: 240_000 });
    const stored = await reader.getCandidate(editedId);
    assert.deepEqual([stored?.origin, stored?.parentId, stored?.source], ['human', editRoot, edited]);
    // The guard's default policy allows only glue in forward, so pure-PyTorch arithmetic is rejected, with its reasons.
    assert.equal(stored?.evaluation?.verdict, 'rejected', JSON.stringify(stored?.evaluation?.result.reasons));
    assert.ok(stored?.evaluation?.result.candidate.startsWith(seededStore.folder), "evaluated from the run's candidates folder");
    assert.equal(await page.locator('.candidate-head .badge.verdict').innerText(), 'rejected');
    const reasons = await page.getByTestId('verdict-reason').allInnerTexts();
    assert.ok(reasons.length > 0 && reasons.every((text) => text.startsWith('torch-fallback')), reasons.join(' | '));
    const edits = await reader.listActions('e2e-scale-add', { types: ['edit-candidate'] });
    assert.equal(edits.at(-1)?.candidateId, editedId);
    await screenshot('candidate-edited', 340);
  });

  it('shows CUDA build figures and compares runs and candidates', async () => {
    const { page } = browser;
    const { ids, problems } = seededStore.seeded;
    await page.goto(`${base}/runs/h200-demo/problems/${problems.softmax.hash}?candidate=${ids.cudaSoftmaxSpill}`);
    await page.getByTestId('tab-build').click();
    await page.getByTestId('build-view').getByText('256 B — spills').waitFor();
    await screenshot('candidate-build', 340);
    await page.goto(`${base}/compare/runs?a=cpu-demo&b=h200-demo`);
    await page.getByTestId('compare-runs-problems').waitFor();
    await screenshot('compare-runs');
    await page.goto(`${base}/compare/candidates?a=${ids.reluOmp}&b=${ids.reluChunked}`);
    await page.locator('.d2h-wrapper').waitFor();
    await screenshot('compare-candidates');
  });

  it("shows a problem folder's shapes in the candidate panel: per-shape figures and the geometric mean", async () => {
    const { page } = browser;
    const problemPage = `${base}/runs/${folderRun.id}/problems/${folderRun.problemHash}`;
    await page.goto(`${problemPage}?candidate=${folderRun.correctId}`);
    await page.getByTestId('shapes-table').waitFor();
    const rows = page.getByTestId('shapes-table').locator('tbody tr');
    assert.equal(await rows.count(), 3);
    const cells = async (index: number) => (await page.getByTestId(`shape-row-${index}`).locator('td').allInnerTexts()).map((text) => text.trim());
    assert.deepEqual(await cells(1), ['1', 'rows=16, cols=128', 'correct', '2.4e-7', '0.0250 ms', '0.0500 ms', '2.00×', '2.00×']);
    assert.equal(await page.getByTestId('shapes-table').getByText('torch.compile').count(), 0, 'no shape has a torch.compile figure');
    assert.deepEqual((await cells(2)).slice(0, 3), ['2', 'rows=4, cols=300, wide=true (unused: wide)', 'correct']);
    assert.equal(
      (await page.getByTestId('shape-geomean').innerText()).trim(),
      'Geometric mean over 3 shapes: 1.44× vs best baseline (1.44× vs eager, – vs torch.compile)',
    );
    assert.equal(await page.getByTestId('timing-heading').textContent(), 'Timing of shape 0 (rows=8, cols=64)');
    const fit = await page.getByTestId('shapes-table').evaluate((table) => ({ table: table.scrollWidth, room: table.parentElement!.clientWidth }));
    assert.ok(fit.table <= fit.room, `the shapes table is ${fit.table}px in ${fit.room}px`);
    await page.getByTestId('timing-table').waitFor();
    await screenshot('candidate-shapes', 200);

    await page.goto(`${problemPage}?candidate=${folderRun.failingId}`);
    await page.getByTestId('shape-row-2').waitFor();
    assert.deepEqual((await cells(1)).slice(0, 5), ['1', 'rows=16, cols=128', 'incorrect', '–', '–']);
    assert.deepEqual((await cells(2)).slice(0, 5), ['2', 'rows=4, cols=300, wide=true (unused: wide)', 'incorrect', '2.1e+0', '–']);
    assert.match(await page.getByTestId('verdict-reason').first().innerText(), /shape 1 \(rows=16, cols=128\): the output has 12 NaN/);
    assert.equal(await page.getByTestId('shape-geomean').count(), 0, 'only a correct sweep has geometric means');
    // The first failing shape's reason is the verdict's own, said once; another failing shape's is listed under the table.
    const shapeReasons = await page.getByTestId('shape-reason').allInnerTexts();
    assert.equal(shapeReasons.length, 1);
    assert.match(shapeReasons[0]!, /^shape 2 · mismatch\s+the output: 1200 of 1200 elements differ/);
  });

  it('says what to do when the store has no runs', async () => {
    const { page } = browser;
    const empty = await startServe(seededStore.folder, path.join(seededStore.folder, 'empty', 'kforge.db'));
    try {
      await page.goto(empty.url);
      await page.getByRole('heading', { name: 'No runs yet' }).waitFor();
      assert.match(await page.locator('.state pre').innerText(), /^kforge optimize .* --store .*empty\/kforge\.db/);
      await screenshot('empty');
    } finally {
      const exited = new Promise((resolve) => empty.child.once('exit', resolve));
      empty.child.kill('SIGINT');
      await exited;
    }
  });

  it('fetched nothing from anywhere but the server, and logged no errors', () => {
    const foreign = browser.requests.filter((url) => !url.startsWith('http://127.0.0.1:') && !url.startsWith('data:'));
    assert.deepEqual(foreign, []);
    assert.deepEqual(
      browser.errors.filter((text) => !/Failed to load resource.*404/.test(text)),
      [],
    );
  });
});
