import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { evaluationResultSchema } from '../core/verdict.js';
import { canonicalJson } from '../core/canonical-json.js';
import { decodeJobFailure, encodeJobFailure } from './evaluation-job-messages.js';
import {
  createJobPayload,
  DEFAULT_MAX_ATTEMPTS,
  evaluationJobId,
  evaluationJobPayloadSchema,
  normaliseJobOptions,
  readJobPayload,
  requestOfPayload,
} from './evaluation-job-payload.js';
import { hostGpuName } from '../backends/nvidia/host-device-names.js';
import { workerLostResult, WORKER_LOST_CHECK } from './redis/lost-job-result.js';

const problem = { name: 'scale-add.py', source: 'import torch\nclass Model(torch.nn.Module): pass\n' };
const candidate = { name: 'candidate.py', source: 'import torch\nclass ModelNew(torch.nn.Module): pass\n' };
const base = { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' } as const;

describe('evaluation job payloads', () => {
  it('fills every option in, drops the device index, and validates', () => {
    const options = normaliseJobOptions({ ...base, deviceIndex: 3, trials: 2, timeoutsSeconds: { build: 30, load: undefined } });
    assert.equal(options.preset, 'cpu');
    assert.equal(options.trials, 2);
    assert.equal(options.perfTrials, 100);
    assert.equal(options.guardPolicy, 'kernelbench');
    assert.equal(normaliseJobOptions({ ...base, guardPolicy: 'default' }).guardPolicy, 'own-kernels', 'the former name');
    assert.equal(options.timeoutsSeconds.build, 30);
    // Limits not given stay the worker's: it sizes them by the reference's measured time.
    assert.equal(options.timeoutsSeconds.load, undefined);
    assert.deepEqual(normaliseJobOptions({ ...base, timeoutsSeconds: { correctness: 300 } }).timeoutsSeconds, { correctness: 300 });
    assert.equal('deviceIndex' in options, false);
    assert.equal(normaliseJobOptions({ ...base, backend: 'cuda', shapesGate: true }).shapes, true);
    const payload = createJobPayload({ problem, candidate, options: { ...base } });
    assert.equal(payload.maxAttempts, DEFAULT_MAX_ATTEMPTS);
    assert.ok(evaluationJobPayloadSchema.safeParse(payload).success);
  });

  it('rejects names with folders, unknown options and bounds past the limit', () => {
    assert.throws(() => createJobPayload({ problem: { ...problem, name: '../etc/passwd' }, candidate, options: base }), /file name without folders/);
    assert.throws(() => createJobPayload({ problem, candidate, options: base, maxAttempts: 0 }));
    assert.throws(() => createJobPayload({ problem, candidate, options: base, maxAttempts: 21 }));
    const payload = createJobPayload({ problem, candidate, options: base });
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...payload, options: { ...payload.options, problemPath: '/x' } }).success, false);
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...payload, v: 2 }).success, false);
  });

  it('hashes sources and normalised options only: equal evaluations share one id', () => {
    const id = evaluationJobId(createJobPayload({ problem, candidate, options: base }));
    assert.match(id, /^sha256-[0-9a-f]{64}$/);
    // Other names, explicit defaults, another device and another attempts bound: the same evaluation.
    const same = createJobPayload({
      problem: { ...problem, name: 'other.py' },
      candidate: { ...candidate, name: 'renamed.py' },
      options: { ...base, trials: 5, perfTrials: 100, preset: 'cpu', deviceIndex: 1, guardPolicy: 'kernelbench', timeoutsSeconds: { build: 600 } },
      maxAttempts: 5,
    });
    assert.equal(evaluationJobId(same), id);
    assert.notEqual(evaluationJobId(createJobPayload({ problem, candidate: { ...candidate, source: `${candidate.source}# changed\n` }, options: base })), id);
    assert.notEqual(evaluationJobId(createJobPayload({ problem, candidate, options: { ...base, trials: 6 } })), id);
    assert.notEqual(evaluationJobId(createJobPayload({ problem, candidate, options: { ...base, skipTiming: true } })), id);
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { f: 1, e: 2 }], c: undefined } }), '{"a":{"d":[1,{"e":2,"f":1}]},"b":1}');
  });

  it('carries the sizes, the cross-check and the timing budget to the worker, and they make another job', () => {
    const plain = createJobPayload({ problem, candidate, options: base });
    assert.deepEqual(
      ['overrides', 'crossCheck', 'timingBudgetMs', 'warmupMs'].filter((name) => name in plain.options),
      [],
      'absent when not asked for',
    );
    const options = { ...base, overrides: { batch_size: 2, affine: false }, crossCheck: true, timingBudgetMs: 12_000, warmupMs: 0 };
    const sized = createJobPayload({ problem, candidate, options });
    const request = requestOfPayload(sized, { problemPath: '/w/p.py', candidatePath: '/w/c.py' });
    assert.deepEqual(request.overrides, { batch_size: 2, affine: false });
    assert.equal(request.crossCheck, true);
    assert.equal(request.timingBudgetMs, 12_000);
    assert.equal(request.warmupMs, 0, 'no warm-up by time, asked for on a GPU, travels as such');
    assert.notEqual(evaluationJobId(sized), evaluationJobId(plain));
    assert.notEqual(evaluationJobId(createJobPayload({ problem, candidate, options: { ...base, overrides: { batch_size: 4 } } })), evaluationJobId(sized));
    assert.equal(evaluationJobId(createJobPayload({ problem, candidate, options: { ...base, overrides: {}, crossCheck: false } })), evaluationJobId(plain));
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...sized, options: { ...sized.options, overrides: { 'not a name': 1 } } }).success, false);
  });

  it("reads a request's files, or says which one cannot be read", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'kforge-payload-'));
    try {
      const problemPath = path.join(folder, 'p.py');
      const candidatePath = path.join(folder, 'c.py');
      await writeFile(problemPath, problem.source);
      await writeFile(candidatePath, candidate.source);
      const read = await readJobPayload({ problemPath, candidatePath, ...base }, 2);
      assert.ok('payload' in read);
      assert.deepEqual([read.payload.problem, read.payload.candidate.name, read.payload.maxAttempts], [{ name: 'p.py', source: problem.source }, 'c.py', 2]);
      const missing = await readJobPayload({ problemPath, candidatePath: path.join(folder, 'missing.py'), ...base });
      assert.ok('result' in missing);
      assert.equal(missing.result.verdict, 'invalid_input');
      assert.match(missing.result.reasons[0]!.message, /missing\.py does not exist/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("carries a problem folder's shapes.py and problem.yaml with its reference.py, and nothing else of the folder", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'kforge-payload-folder-'));
    try {
      const folder = path.join(root, '01_scale');
      await mkdir(folder);
      for (const name of ['reference.py', 'shapes.py', 'problem.yaml', 'check.py', 'solution.py']) await writeFile(path.join(folder, name), `# ${name}\n`);
      const candidatePath = path.join(root, 'c.py');
      await writeFile(candidatePath, candidate.source);
      const read = await readJobPayload({ problemPath: path.join(folder, 'reference.py'), candidatePath, ...base });
      assert.ok('payload' in read);
      assert.deepEqual(read.payload.declarations, [
        { name: 'shapes.py', source: '# shapes.py\n' },
        { name: 'problem.yaml', source: '# problem.yaml\n' },
      ]);
      assert.ok(evaluationJobPayloadSchema.safeParse(read.payload).success);

      // A declaration is part of the evaluation: another tolerance or shape is another job.
      const { declarations: _declarations, ...bare } = read.payload;
      const changed = { ...read.payload, declarations: [{ name: 'problem.yaml' as const, source: 'tolerance: {fp32: 0.5}\n' }] };
      assert.notEqual(evaluationJobId(bare), evaluationJobId(read.payload));
      assert.notEqual(evaluationJobId(changed), evaluationJobId(read.payload));

      await rm(path.join(folder, 'shapes.py'));
      const yamlOnly = await readJobPayload({ problemPath: path.join(folder, 'reference.py'), candidatePath, ...base });
      assert.ok('payload' in yamlOnly);
      assert.deepEqual(
        yamlOnly.payload.declarations?.map((file) => file.name),
        ['problem.yaml'],
      );
      const single = await readJobPayload({ problemPath: path.join(folder, 'check.py'), candidatePath, ...base });
      assert.ok('payload' in single);
      assert.equal('declarations' in single.payload, false, 'a single-file problem carries none, and keeps the id it had');
      const { v, problem: file, candidate: candidateFile, options } = single.payload;
      const before = canonicalJson({ v, problem: file.source, candidate: candidateFile.source, options });
      assert.equal(evaluationJobId(single.payload), `sha256-${createHash('sha256').update(before, 'utf8').digest('hex')}`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('refuses declarations of another name, twice the same, or beside a file other than reference.py', () => {
    const folderProblem = { name: 'reference.py', source: problem.source };
    const shapes = { name: 'shapes.py' as const, source: 'SHAPES = []\n' };
    const payload = createJobPayload({ problem: folderProblem, declarations: [shapes], candidate, options: base });
    assert.ok(evaluationJobPayloadSchema.safeParse(payload).success);
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...payload, declarations: [{ name: 'check.py', source: '' }] }).success, false);
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...payload, declarations: [{ name: '../shapes.py', source: '' }] }).success, false);
    assert.equal(evaluationJobPayloadSchema.safeParse({ ...payload, declarations: [shapes, shapes] }).success, false);
    assert.throws(
      () => createJobPayload({ problem, declarations: [shapes], candidate, options: base }),
      /declarations only beside a problem folder's reference\.py/,
    );
  });

  it('makes a valid crashed result that names every attempt', () => {
    const payload = createJobPayload({ problem, candidate, options: base });
    const attempts = [1, 2, 3].map((attempt) => ({ attempt, workerId: `w${attempt}`, host: 'h', pid: 100 + attempt, startedAt: '2026-01-01T00:00:00.000Z' }));
    const result = workerLostResult(payload, attempts);
    assert.ok(evaluationResultSchema.safeParse(result).success);
    assert.equal(result.verdict, 'crashed');
    assert.equal(result.candidate, 'candidate.py');
    assert.equal(result.reasons.length, 4);
    assert.ok(result.reasons.every((reason) => reason.check === WORKER_LOST_CHECK));
    assert.match(result.reasons[0]!.message, /started 3 times \(the bound is 3\)/);
    assert.match(result.diagnostics.stderr, /attempt 2: worker w2 \(host h, pid 102\)/);
  });

  it('encodes job failures and wraps foreign reasons', () => {
    assert.deepEqual(decodeJobFailure(encodeJobFailure({ kind: 'setup', message: 'no torch', hint: 'run kforge doctor' })), {
      kforge: 1,
      kind: 'setup',
      message: 'no torch',
      hint: 'run kforge doctor',
    });
    assert.deepEqual(decodeJobFailure('job stalled more than allowable limit'), {
      kforge: 1,
      kind: 'internal',
      message: 'job stalled more than allowable limit',
    });
    assert.equal(decodeJobFailure(undefined).kind, 'internal');
  });

  it('names GPUs host-wide through CUDA_VISIBLE_DEVICES', () => {
    assert.equal(hostGpuName(1, undefined), 'gpu1');
    assert.equal(hostGpuName(0, '2,3'), 'gpu2');
    assert.equal(hostGpuName(1, ' 2, 03'), 'gpu3');
    assert.equal(hostGpuName(0, 'GPU-8f2c'), 'GPU-8f2c');
    assert.equal(hostGpuName(0, ''), 'gpu0');
  });
});
