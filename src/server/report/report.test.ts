import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileErrorResult, correctResult, FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { runReportSchema, type RunReportData } from '../api-schemas/report-schemas.js';
import { createServer } from '../create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { buildRunReport } from './report-data.js';
import { renderReport } from './report-format.js';

let seededStore: SeededTestStore;
let report: RunReportData;
const now = () => new Date('2026-03-03T08:00:00.000Z');

before(async () => {
  seededStore = await openSeededTestStore('kforge-report-');
  report = (await buildRunReport(seededStore.store, 'cpu-demo', { now }))!;
});
after(() => seededStore.cleanup());

const close = (actual: number | null, expected: number, what: string): void => {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what}: expected ${expected}, got ${actual}`);
};

describe('buildRunReport', () => {
  it("reports each problem's accepted kernel, else its fastest correct one", () => {
    const [relu, softmax, fused] = report.problems;
    assert.deepEqual([relu!.candidateId, relu!.chosenBy], [seededStore.seeded.ids.reluHuman, 'fastest']);
    assert.deepEqual([softmax!.candidateId, softmax!.chosenBy], [seededStore.seeded.ids.softTwoPass, 'accepted']);
    assert.deepEqual([fused!.candidateId, fused!.level], [seededStore.seeded.ids.fusedParallel, 'level2']);
    close(relu!.speedupVsEager, 6.1 / 3.0, 'relu vs eager');
    close(softmax!.speedupVsCompile, 9.6 / 4.7, 'softmax vs compile');
    close(fused!.speedupVsBest, 14.8 / 9.4, 'fused vs best');
    assert.deepEqual(relu!.verdictCounts, {
      correct: 4,
      incorrect: 1,
      compile_error: 1,
      runtime_error: 0,
      timeout: 0,
      crashed: 0,
      rejected: 1,
      invalid_input: 0,
    });
  });

  it('computes fast_p over every problem against eager and against the best baseline', () => {
    const level1 = report.levels.find((group) => group.level === 'level1')!;
    assert.deepEqual(
      level1.fastP.map((row) => [row.p, row.vsEager, row.vsBest]),
      [
        [0, 1, 1],
        [1, 1, 1],
        [1.5, 1, 0.5],
        [2, 1, 0.5],
      ],
    );
    assert.deepEqual(
      report.total.fastP.map((row) => [row.p, row.vsEager, row.vsBest]),
      [
        [0, 1, 1],
        [1, 1, 1],
        [1.5, 1, 2 / 3],
        [2, 1, 1 / 3],
      ],
    );
    close(report.total.geomeanSpeedupVsEager, Math.cbrt((6.1 / 3.0) * (11.2 / 4.7) * (25.1 / 9.4)), 'geomean vs eager');
    close(report.total.geomeanSpeedupVsCompile, Math.cbrt((4.0 / 3.0) * (9.6 / 4.7) * (14.8 / 9.4)), 'geomean vs compile');
    close(report.total.meanSpeedOfLightShare, (1.6 / 3.0 + 1.6 / 4.7 + 0.8 / 9.4) / 3, 'mean share of speed of light');
    close(report.problems[0]!.speedOfLightShare, 1.6 / 3.0, 'relu share of speed of light');
    assert.deepEqual(
      report.levels.map((group) => [group.level, group.problems]),
      [
        ['level1', 2],
        ['level2', 1],
      ],
    );
  });

  it('counts a failed problem in the denominator of fast_p', async () => {
    const { relu } = seededStore.seeded.problems;
    await seededStore.store.createRun({
      id: 'failing',
      strategy: 'refine',
      model: 'x:y',
      config: {},
      problemHashes: [relu.hash, seededStore.seeded.problems.softmax.hash],
    });
    const broken = await seededStore.store.addCandidate({ runId: 'failing', problemHash: relu.hash, round: 0, source: 'x', origin: 'model' });
    await seededStore.store.recordEvaluation({ candidateId: broken.id, result: compileErrorResult(), gpuSeconds: 1, optionsHash: 'o', cacheKey: 'failing-1' });
    const fine = await seededStore.store.addCandidate({
      runId: 'failing',
      problemHash: seededStore.seeded.problems.softmax.hash,
      round: 0,
      source: 'y',
      origin: 'model',
    });
    await seededStore.store.recordEvaluation({
      candidateId: fine.id,
      result: correctResult({ medianMs: 0.5, eagerMs: 1 }),
      gpuSeconds: 1,
      optionsHash: 'o',
      cacheKey: 'failing-2',
    });
    const failing = (await buildRunReport(seededStore.store, 'failing', { now }))!;
    assert.deepEqual(
      failing.problems.map((problem) => [problem.verdict, problem.chosenBy]),
      [
        ['compile_error', 'none'],
        ['correct', 'fastest'],
      ],
    );
    assert.deepEqual(
      failing.total.fastP.map((row) => row.vsEager),
      [0.5, 0.5, 0.5, 0],
    );
    close(failing.total.geomeanSpeedupVsEager, 2, 'geomean over correct problems only');
    assert.equal(failing.run.backend, null);
  });

  it('is undefined for an unknown run', async () => {
    assert.equal(await buildRunReport(seededStore.store, 'nope'), undefined);
  });
});

describe('renderReport', () => {
  it('json: the report data, valid against its schema', () => {
    const parsed = runReportSchema.parse(JSON.parse(renderReport(report, 'json').text));
    assert.equal(parsed.run.id, 'cpu-demo');
    assert.equal(parsed.generatedAt, '2026-03-03T08:00:00.000Z');
  });

  it('md: metrics per level and a row per problem', () => {
    const text = renderReport(report, 'md').text;
    assert.match(text, /^# kforge report: run cpu-demo/);
    assert.match(text, /\| level \| correct \| fast_0 \| fast_1 \| fast_1\.5 \| fast_2 \|/);
    assert.match(text, /\| level1 \| 2\/2 \| 100% \/ 100% \| 100% \/ 100% \| 100% \/ 50% \| 100% \/ 50% \|/);
    assert.match(text, /\| all \| 3\/3 \|/);
    assert.match(text, /\| 05_softmax \| level1 \| correct \| #\d+ \(accepted\) \| 2\.38x \| 2\.04x \| 2\.04x \| 4\.700 ms \|/);
  });

  it("names the guard policy its fast_p counts verdicts under (a stored former name resolved) and each kernel's own share", () => {
    // The seeded evaluations were judged under `default`, the former name of own-kernels.
    assert.equal(report.run.guardPolicy, 'own-kernels');
    const text = renderReport(report, 'md').text;
    assert.match(text, /guard policy `own-kernels`/);
    assert.match(text, /correct under the guard policy `own-kernels` and more than p times faster/);
    assert.match(text, /\| own share \|/);
    assert.ok(
      report.problems.every((problem) => problem.ownShare === null),
      'the seeded results carry no attribution',
    );
  });

  it('csv: one row per problem, level and total, with fast_p columns', () => {
    const lines = renderReport(report, 'csv').text.trimEnd().split('\r\n');
    const header = lines[0]!.split(',');
    const rows = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((cell, index) => [header[index], cell])));
    assert.deepEqual(
      rows.map((row) => `${row.scope}:${row.level}`),
      ['problem:level1', 'problem:level1', 'problem:level2', 'level:level1', 'level:level2', 'total:all'],
    );
    const total = rows.at(-1)!;
    assert.equal(Number(total['fast_1.5_vs_best']).toFixed(4), (2 / 3).toFixed(4));
    assert.equal(total.problems, '3');
    assert.equal(rows[0]!.problem, '01_relu');
    assert.equal(Number(rows[0]!.speedup_vs_eager).toFixed(4), (6.1 / 3).toFixed(4));
    assert.equal(Number(rows[0]!.speed_of_light_share).toFixed(4), (1.6 / 3).toFixed(4));
  });

  it('html: one self-contained file with inline SVG plots and nothing fetched', () => {
    const text = renderReport(report, 'html').text;
    assert.match(text, /^<!doctype html>/);
    assert.equal((text.match(/<svg /g) ?? []).length, 3);
    assert.match(text, /Best speedup so far/);
    assert.doesNotMatch(text, /<script|<link|src="http|href="http|@import|url\(/i);
    assert.match(text, /05_softmax/);
  });

  it('html: escapes what the store holds', () => {
    const tricky = { ...report, run: { ...report.run, model: '<img src=x onerror=alert(1)>' } };
    assert.doesNotMatch(renderReport(tricky, 'html').text, /<img/);
  });
});

describe('GET /api/runs/:runId/report', () => {
  it('serves each format with its content type, and as a download when asked', async () => {
    const app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null, now });
    try {
      const md = await app.inject({ url: '/api/runs/cpu-demo/report?format=md' });
      assert.match(String(md.headers['content-type']), /text\/markdown/);
      assert.equal(md.body, renderReport(report, 'md').text);
      const json = await app.inject({ url: '/api/runs/cpu-demo/report?format=json' });
      assert.equal(json.json<RunReportData>().run.id, 'cpu-demo');
      const html = await app.inject({ url: '/api/runs/cpu-demo/report?download=1' });
      assert.match(String(html.headers['content-disposition']), /attachment; filename="kforge-report-cpu-demo\.html"/);
      assert.equal((await app.inject({ url: '/api/runs/cpu-demo/report?format=pdf' })).statusCode, 400);
      assert.equal((await app.inject({ url: '/api/runs/nope/report' })).statusCode, 404);
    } finally {
      await app.close();
    }
  });
});
