import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileErrorResult, FakeEvaluator } from '../../test-support/fake-evaluator.js';
import type { CandidateDetail, ProblemView } from './api-types.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

let seededStore: SeededTestStore;
let app: ZodApp;
let ids: Record<string, number>;

before(async () => {
  seededStore = await openSeededTestStore();
  ids = seededStore.seeded.ids;
  app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null });
});
after(async () => {
  await app.close();
  await seededStore.cleanup();
});

const candidate = async (id: number): Promise<CandidateDetail> => (await app.inject({ url: `/api/candidates/${id}` })).json<CandidateDetail>();

describe('GET /api/runs/:runId/problems/:problemHash', () => {
  it('returns the candidate tree with lineage, idea labels, rounds, verdicts and the human edit', async () => {
    const { relu } = seededStore.seeded.problems;
    const response = await app.inject({ url: `/api/runs/cpu-demo/problems/${relu.hash}` });
    assert.equal(response.statusCode, 200);
    const view = response.json<ProblemView>();
    assert.equal(view.problem.name, '01_relu');
    assert.equal(view.problem.level, 'level1');
    assert.match(view.problem.source, /class Model/);
    const byId = new Map(view.candidates.map((node) => [node.id, node]));
    assert.deepEqual(
      view.candidates.map((node) => node.verdict),
      ['correct', 'compile_error', 'correct', 'incorrect', 'rejected', 'correct', 'correct'],
    );
    assert.equal(byId.get(ids.reluOmp!)!.parentId, ids.reluSerial);
    assert.equal(byId.get(ids.reluOmp!)!.ideaLabel, 'openmp-parallel');
    assert.equal(byId.get(ids.reluChunked!)!.round, 3);
    const human = byId.get(ids.reluHuman!)!;
    assert.deepEqual([human.origin, human.parentId, human.speedupVsEager?.toFixed(3)], ['human', ids.reluChunked, '2.033']);
    assert.match(byId.get(ids.reluFallback!)!.firstReason ?? '', /^forward calls torch\.relu, the reference operation itself/);
    assert.deepEqual(
      view.hints.map((hint) => hint.note),
      ['The input is contiguous float32; vectorise with 8-wide chunks and keep the tail loop.'],
    );
    assert.deepEqual(
      view.ideas.map((idea) => idea.status),
      ['active', 'pinned', 'dropped'],
    );
  });

  it('marks the pending candidate as not evaluated and the accepted one as accepted', async () => {
    const { softmax } = seededStore.seeded.problems;
    const view = (await app.inject({ url: `/api/runs/cpu-demo/problems/${softmax.hash}` })).json<ProblemView>();
    const pending = view.candidates.find((node) => node.id === ids.softPending)!;
    assert.deepEqual([pending.verdict, pending.evaluatedAt, pending.evaluating], [null, null, false]);
    assert.deepEqual(
      view.candidates.filter((node) => node.accepted).map((node) => node.id),
      [ids.softTwoPass],
    );
    assert.equal(view.problem.acceptedCandidateId, ids.softTwoPass);
  });

  it('answers 404 for a problem the run does not have and 400 for a malformed hash', async () => {
    assert.equal((await app.inject({ url: `/api/runs/cpu-demo/problems/${'0'.repeat(64)}` })).statusCode, 404);
    const malformed = await app.inject({ url: '/api/runs/cpu-demo/problems/xyz' });
    assert.equal(malformed.statusCode, 400);
    assert.match(malformed.json<{ error: { message: string } }>().error.message, /problem hash/);
  });
});

describe('GET /api/candidates/:candidateId', () => {
  it('gives the source, the parent source for the diff, the lineage and the prompt and reply', async () => {
    const detail = await candidate(ids.reluOmp!);
    assert.match(detail.candidate.source, /#pragma omp parallel for/);
    assert.equal(detail.parent?.id, ids.reluSerial);
    assert.doesNotMatch(detail.parent!.source, /#pragma omp/);
    assert.deepEqual(
      detail.lineage.map((step) => step.id),
      [ids.reluSerial, ids.reluOmp],
    );
    assert.deepEqual(
      detail.children.sort((a, b) => a - b),
      [ids.reluTail, ids.reluFallback, ids.reluChunked],
    );
    assert.equal(detail.modelCall?.messages[0]?.role, 'system');
    assert.match(String(detail.modelCall?.messages[1]?.content), /Your previous attempt:\ncandidate #2: compile_error/);
    assert.match(detail.modelCall?.replyText ?? '', /```python/);
    assert.ok((detail.modelCall?.inputTokens ?? 0) > 0);
  });

  it('gives a correct candidate its timings with intervals against eager and torch.compile', async () => {
    const detail = await candidate(ids.reluChunked!);
    const timing = detail.evaluation!.result.timing!;
    assert.equal(timing.candidate_ms.median, 3.2);
    assert.equal(timing.eager_ms!.median, 6.1);
    assert.equal(timing.compile_ms!.median, 4.0);
    assert.equal(timing.candidate_ms.ci95.length, 2);
    assert.equal(detail.evaluation!.result.correctness!.fp64!.max_rel_error, 2.6e-6);
    assert.deepEqual(detail.speedOfLight, { lowerBoundMs: 1.6, share: 0.5, bytes: 67_108_864, flops: 0 });
    assert.deepEqual([detail.guard?.policy, detail.guard?.findings, detail.guard?.checks.every((check) => check.status === 'passed')], ['default', [], true]);
  });

  it('gives a candidate without a measured bound no share of speed of light', async () => {
    const { relu } = seededStore.seeded.problems;
    const bare = await seededStore.store.addCandidate({ runId: 'cpu-demo', problemHash: relu.hash, round: 9, source: '# bare', origin: 'files' });
    await seededStore.store.recordEvaluation({ candidateId: bare.id, result: compileErrorResult(), gpuSeconds: 0, optionsHash: 'o', cacheKey: 'bare' });
    const detail = await candidate(bare.id);
    assert.deepEqual([detail.speedOfLight, detail.guard], [null, null]);
  });

  it('gives failures their reasons, compiler output and error profile', async () => {
    const build = await candidate(ids.reluOmpBroken!);
    assert.equal(build.evaluation!.result.verdict, 'compile_error');
    assert.match(build.evaluation!.result.diagnostics.compiler!, /'threads_used' was not declared/);
    const wrong = await candidate(ids.reluTail!);
    assert.deepEqual([wrong.evaluation!.result.correctness!.max_abs_error, wrong.evaluation!.result.correctness!.mismatch_count], [3.91, 15]);
    const rejected = await candidate(ids.reluFallback!);
    assert.deepEqual(
      rejected.evaluation!.result.reasons.map((reason) => reason.check),
      ['torch-fallback'],
    );
    assert.deepEqual(
      rejected.guard?.findings.map((finding) => [finding.check, finding.severity, finding.line]),
      [['torch-fallback', 'reject', 10]],
    );
    assert.match((await candidate(ids.softTwoPass!)).guard?.notes[0] ?? '', /online max and sum reorder the additions/);
    const pending = await candidate(ids.softPending!);
    assert.deepEqual([pending.evaluation, pending.candidate.verdict, pending.build], [null, null, null]);
  });

  it('gives a CUDA candidate its registers, shared memory, spills, PTX and SASS', async () => {
    const detail = await candidate(ids.cudaSoftmaxSpill!);
    assert.deepEqual(
      detail.build?.kernels.map((kernel) => [kernel.name, kernel.arch, kernel.registers, kernel.sharedBytes, kernel.localBytes]),
      [['softmax_kernel(float const*, float*, long)', 'sm_90', 255, 4096, 256]],
    );
    assert.match(detail.build!.ptx, /\.target sm_90/);
    assert.match(detail.build!.sass, /code for sm_90/);
    assert.equal(detail.build!.error, null);
    assert.equal((await candidate(ids.reluSerial!)).build, null);
  });

  it('shows the acceptance note on the accepted candidate only', async () => {
    assert.match((await candidate(ids.softTwoPass!)).acceptance?.note ?? '', /Two-pass online softmax/);
    assert.equal((await candidate(ids.softThreePass!)).acceptance, null);
  });

  it('answers 404 for an unknown candidate and 400 for a non-numeric id', async () => {
    assert.equal((await app.inject({ url: '/api/candidates/99999' })).statusCode, 404);
    const bad = await app.inject({ url: '/api/candidates/abc' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json<{ error: { message: string } }>().error.message, /candidate id/);
  });
});
