import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { compilerUnavailable, TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * `kforge eval` on a KernelBench-Hard problem folder as a user runs it (bin/kforge.js, the real
 * worker, the cpu backend): every shape of shapes.py checked and timed, one result with each
 * shape's verdict and the geometric mean, `--shape`, and folders that cannot be used. One C++
 * extension is built (about 20–45 s on two cores); the other candidates are plain PyTorch under
 * `--guard-policy pytorch`, the guard not being the point here.
 */
const skip = torchUnavailable() || compilerUnavailable();

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-problem-folder-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));

const FOLDER = fixturePath('problem-folders', 'scale-shift');
const candidate = (name: string): string => fixturePath('problem-folders', 'candidates', `scale-shift-${name}.py`);
/** Few trials and a short timing budget: these tests check what is reported, not how fast. */
const QUICK = ['--backend', 'cpu', '--trials', '2', '--perf-trials', '5', '--warmup', '1', '--timing-budget', '1'];

function kforge(args: string[]) {
  return execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), 'eval', ...args], {
    reject: false,
    cwd: root,
    env: { KFORGE_PYTHON: TORCH_PYTHON, KFORGE_CACHE_DIR: path.join(root, 'cache'), NO_COLOR: '1' },
    timeout: 600_000,
  });
}

describe('kforge eval on a problem folder', { skip }, () => {
  it('checks and times every shape: per-shape verdicts and figures, the geometric mean, the failing shape named', { timeout: 900_000 }, async () => {
    const run = await kforge([FOLDER, candidate('cpp'), candidate('narrow'), ...QUICK, '--guard-policy', 'pytorch', '--json']);
    assert.equal(run.exitCode, 1, String(run.stderr));
    const results = String(run.stdout)
      .trim()
      .split('\n')
      .map((line) => evaluationResultSchema.parse(JSON.parse(line)));
    const byCandidate = new Map<string, EvaluationResult>(results.map((result) => [path.basename(result.candidate), result]));

    const fast = byCandidate.get('scale-shift-cpp.py')!;
    assert.equal(fast.verdict, 'correct', JSON.stringify(fast.reasons));
    assert.equal(fast.problem, path.join(FOLDER, 'reference.py'));
    assert.deepEqual(
      fast.shapes?.map((shape) => [shape.index, shape.verdict, shape.overrides, shape.unused]),
      [
        [0, 'correct', { ROWS: 8, COLS: 64 }, []],
        [1, 'correct', { ROWS: 16, COLS: 128 }, []],
        [2, 'correct', { ROWS: 4, COLS: 300 }, ['wide']],
      ],
    );
    assert.deepEqual(fast.shapes?.[2]?.values, { rows: 4, cols: 300, wide: true });
    assert.ok(fast.verdict === 'correct' && fast.shape_geomean && fast.timing);
    const perShape = fast.shapes!.map((shape) => shape.timing!.speedup_vs_eager!);
    assert.ok(
      perShape.every((speedup) => speedup > 0),
      'every shape was timed against eager',
    );
    const geomean = Math.cbrt(perShape[0]! * perShape[1]! * perShape[2]!);
    assert.equal(fast.shape_geomean.shapes, 3);
    assert.ok(Math.abs(fast.shape_geomean.speedup_vs_eager! - geomean) < 1e-9 * geomean);
    assert.equal(fast.timing.speedup_vs_eager, fast.shape_geomean.speedup_vs_eager, 'the top-level speedup is the geometric mean');
    assert.equal(fast.timing.candidate_ms.median, fast.shapes![0]!.timing!.candidate_median_ms, "the top-level statistics are the first shape's");
    assert.equal(fast.correctness.trials, 6, 'two trials at each of three shapes');

    const narrow = byCandidate.get('scale-shift-narrow.py')!;
    assert.equal(narrow.verdict, 'incorrect');
    assert.match(narrow.reasons[0]!.message, /^shape 2 \(rows=4, cols=300, wide=true\): the output: 1200 of 1200 elements differ/);
    assert.deepEqual(
      narrow.shapes?.map((shape) => shape.verdict),
      ['correct', 'correct', 'incorrect'],
      'a failing shape does not hide the others',
    );
    assert.deepEqual(narrow.problem_overrides, { ROWS: 4, COLS: 300 });
    assert.equal('shape_geomean' in narrow, false);
  });

  it('--shape N evaluates that shape alone; the human account names it', { timeout: 600_000 }, async () => {
    const run = await kforge([path.join(FOLDER, 'reference.py'), candidate('narrow'), ...QUICK, '--guard-policy', 'pytorch', '--shape', '2']);
    assert.equal(run.exitCode, 1, String(run.stderr));
    const stdout = String(run.stdout);
    assert.match(stdout, /^incorrect {2}scale-shift-narrow\.py against scale-shift\/reference\.py/);
    assert.match(stdout, /\[mismatch\] shape 2 \(rows=4, cols=300, wide=true\): the output/);
    assert.match(stdout, /^shapes \(1 evaluated\)$/m);
    assert.match(stdout, /^ +2 {2}rows=4, cols=300, wide=true \(unused: wide\) {2}incorrect$/m);
    assert.match(String(run.stderr), /^kforge eval: shape 2 \(rows=4, cols=300, wide=true\), 1 of 1$/m);
  });

  it("judges a solution named Model on the reference's weights, under problem.yaml's tolerance and forbidden names", { timeout: 600_000 }, async () => {
    const run = await kforge([
      FOLDER,
      candidate('loaded'),
      candidate('forbidden'),
      '--backend',
      'cpu',
      '--trials',
      '2',
      '--no-timing',
      '--guard-policy',
      'pytorch',
      '--json',
    ]);
    assert.equal(run.exitCode, 1, String(run.stderr));
    const results = String(run.stdout)
      .trim()
      .split('\n')
      .map((line) => evaluationResultSchema.parse(JSON.parse(line)));
    const byCandidate = new Map<string, EvaluationResult>(results.map((result) => [path.basename(result.candidate), result]));
    const loaded = byCandidate.get('scale-shift-loaded.py')!;
    assert.equal(loaded.verdict, 'correct', JSON.stringify(loaded.reasons));
    const parameters = loaded.guard?.checks?.find((check) => check.check === 'parameters');
    assert.match(String(parameters?.message), /loaded from Model's state_dict/);
    assert.equal(loaded.correctness.tolerance_source, 'problem', 'problem.yaml declares the float32 tolerance');
    const forbidden = byCandidate.get('scale-shift-forbidden.py')!;
    assert.equal(forbidden.verdict, 'rejected');
    assert.equal(forbidden.reasons[0]?.check, 'forbidden');
    assert.match(forbidden.reasons[0]!.message, /forbids `torch\.addcmul` \(aten::addcmul dispatched/);
  });

  it('refuses what cannot be evaluated with exit 2 and what to do: a shape past the last, --shape on a single file, a malformed folder', async () => {
    const outside = await kforge([FOLDER, candidate('correct'), '--backend', 'cpu', '--shape', '3']);
    assert.equal(outside.exitCode, 2);
    assert.equal(String(outside.stderr).trim(), `kforge eval: --shape 3: the problem folder ${FOLDER} has 3 shapes (0 to 2)`);

    const single = await kforge([path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py'), candidate('correct'), '--backend', 'cpu', '--shape', '0']);
    assert.equal(single.exitCode, 2);
    assert.match(String(single.stderr), /--shape picks a shape of a problem folder \(reference\.py with shapes\.py\); .*02_gelu\.py is a single-file problem/);

    const broken = path.join(root, 'broken');
    cpSync(FOLDER, broken, { recursive: true });
    writeFileSync(path.join(broken, 'shapes.py'), 'SHAPES = {"rows": 8}\n');
    const malformed = await kforge([broken, candidate('correct'), '--backend', 'cpu', '--json']);
    assert.equal(malformed.exitCode, 2);
    assert.equal(malformed.stdout, '');
    assert.equal(
      String(malformed.stderr).trim(),
      `kforge eval: ${path.join(broken, 'shapes.py')} must define SHAPES, a non-empty list of dicts such as [{'M': 4096, 'N': 4096}]`,
    );

    const empty = path.join(root, 'empty');
    cpSync(path.join(FOLDER, 'shapes.py'), path.join(empty, 'shapes.py'));
    const noReference = await kforge([empty, candidate('correct'), '--backend', 'cpu']);
    assert.equal(noReference.exitCode, 2);
    assert.match(String(noReference.stderr), /is a directory without reference\.py; pass a KernelBench-style problem file or a problem folder/);
  });
});
