import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema } from '../../core/verdict.js';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/** `kforge eval` as a user runs it: bin/kforge.js in a child process, against the fake worker. */
const cacheRoot = mkdtempSync(path.join(os.tmpdir(), 'kforge-cli-test-'));
after(() => rmSync(cacheRoot, { recursive: true, force: true }));

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');
const candidate = (scenario: string): string => fixturePath('fake-scenarios', `candidate-${scenario}.py`);

function kforge(args: string[], environment: Record<string, string> = {}) {
  return execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), ...args], {
    reject: false,
    cwd: cacheRoot,
    env: {
      KFORGE_PYTHON: TEST_PYTHON,
      KFORGE_WORKER_DIR: fixturePath('fake-worker'),
      KFORGE_CACHE_DIR: path.join(cacheRoot, 'cache'),
      NO_COLOR: '1',
      ...environment,
    },
    timeout: 120_000,
  });
}

describe('kforge eval: misuse exits 2 with one line saying what to do', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['a negative count', ['--perf-trials', '-3'], /^kforge eval: expected `--perf-trials` to be a positive integer, got `-3`$/],
    ['a count that is not a number', ['--trials=five'], /^kforge eval: expected `--trials` to be a positive integer, got `five`$/],
    ['an unknown backend', ['--backend', 'rocm'], /^kforge eval: expected `--backend` to be one of cuda, triton, cpu, got `rocm`$/],
    ['an unknown precision', ['--precision', 'fp64'], /^kforge eval: expected `--precision` to be one of fp32, fp16, bf16, native, got `fp64`$/],
    ['a negative warm-up time', ['--warmup-ms', '-5'], /^kforge eval: expected `--warmup-ms` to be a non-negative number of milliseconds, got `-5`$/],
    ['a bad time limit', ['--timeout-build', '0'], /^kforge eval: expected `--timeout-build` to be a positive number of seconds, got `0`$/],
    ['an unknown flag', ['--jsno'], /^kforge eval: unknown option '--jsno' \(did you mean --json\?\); run `kforge eval --help` for usage$/],
    [
      'a typo of a backend',
      ['--backend', 'cpuu'],
      /^kforge eval: expected `--backend` to be one of cuda, triton, cpu, got `cpuu` \(did you mean --backend cpu\?\)$/,
    ],
    [
      'a typo of a guard policy',
      ['--guard-policy', 'pytorc'],
      /^kforge eval: expected `--guard-policy` to be one of kernelbench, own-kernels, strict, permissive, pytorch, got `pytorc` \(did you mean --guard-policy pytorch\?\)$/,
    ],
  ];
  for (const [name, flags, expected] of cases) {
    it(name, async () => {
      const result = await kforge(['eval', PROBLEM, candidate('correct'), ...flags]);
      assert.equal(result.exitCode, 2, String(result.stderr));
      assert.equal(result.stdout, '');
      const lines = String(result.stderr).trim().split('\n');
      assert.equal(lines.length, 1, String(result.stderr));
      assert.match(lines[0]!, expected);
    });
  }

  it('a missing file, a directory, an unreadable file, a missing argument', async () => {
    const missing = await kforge(['eval', 'nope.py', candidate('correct'), '--json']);
    assert.equal(missing.exitCode, 2);
    assert.equal(missing.stdout, '');
    assert.equal(
      String(missing.stderr).trim(),
      'kforge eval: the problem file `nope.py` does not exist; pass the path of a KernelBench-style problem file or a problem folder (reference.py with shapes.py)',
    );
    const directory = await kforge(['eval', PROBLEM, cacheRoot]);
    assert.equal(directory.exitCode, 2);
    assert.match(String(directory.stderr), /is a directory; pass a candidate file that defines ModelNew/);
    if (process.getuid?.() !== 0) {
      const locked = path.join(cacheRoot, 'locked.py');
      writeFileSync(locked, '# nothing');
      chmodSync(locked, 0o000);
      const unreadable = await kforge(['eval', PROBLEM, locked]);
      assert.equal(unreadable.exitCode, 2);
      assert.match(String(unreadable.stderr), /cannot be read \(EACCES\)/);
    }
    const short = await kforge(['eval', PROBLEM]);
    assert.equal(short.exitCode, 2);
    assert.equal(String(short.stderr).trim(), "kforge eval: missing required argument 'candidate'; run `kforge eval --help` for usage");
  });

  it('a worker that cannot start is the machine, not the candidate: exit 2 pointing at kforge doctor', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('correct'), '--backend', 'cpu', '--json'], {
      KFORGE_WORKER_DIR: path.join(cacheRoot, 'no-worker'),
    });
    assert.equal(result.exitCode, 2);
    assert.equal(result.stdout, '');
    assert.match(String(result.stderr), /No module named kforge_worker.*kforge doctor/);
    assert.equal(String(result.stderr).trim().split('\n').length, 1, 'one sentence, no log records or stack');
  });
});

/** The real worker on the cpu backend, for what only it decides (KFORGE_PYTHON, else /usr/bin/python3). */
const REAL_PYTHON = TORCH_PYTHON;

describe('kforge eval --set: a constant the problem lacks is misuse, not a verdict', { skip: torchUnavailable() }, () => {
  it("exits 2 with the worker's one line naming the constants the problem has, alone and in a batch", async () => {
    const problem = fixturePath('problems', 'scale-add.py');
    const honest = fixturePath('candidates', 'scale-add-correct.py');
    const real = { KFORGE_PYTHON: REAL_PYTHON, KFORGE_WORKER_DIR: path.join(REPOSITORY_ROOT, 'worker') };
    const single = await kforge(['eval', problem, honest, '--backend', 'cpu', '--set', 'batchsize=2', '--json'], real);
    assert.equal(single.exitCode, 2, String(single.stderr));
    assert.equal(single.stdout, '', 'no verdict is printed for a misused command');
    assert.doesNotMatch(String(single.stderr), /could not be sized/, 'the size estimate failed for the same reason: no warning of its own');
    assert.match(
      String(single.stderr),
      /^kforge eval: --set batchsize=2: the problem scale-add\.py has no module-level constant `batchsize` \(its constants: batch_size, features; did you mean batch_size\?\)$/m,
    );
    const batch = await kforge(
      ['eval', problem, honest, fixturePath('candidates', 'scale-add-incorrect.py'), '--backend', 'cpu', '--set', 'batchsize=2'],
      real,
    );
    assert.equal(batch.exitCode, 2, String(batch.stderr));
    assert.match(String(batch.stderr), /kforge eval: --set batchsize=2: .*no module-level constant `batchsize`/);
    assert.doesNotMatch(String(batch.stderr), /did not build/, 'nothing was built for a misused command');
    const known = await kforge(
      ['eval', problem, honest, '--backend', 'cpu', '--set', 'batch_size=2', '--perf-trials', '10', '--guard-policy', 'pytorch', '--json'],
      real,
    );
    assert.equal(known.exitCode, 0, String(known.stderr));
    assert.deepEqual(JSON.parse(String(known.stdout)).problem_overrides, { batch_size: 2 });
  });
});

describe('kforge eval: a wrong answer first, then the policy that would measure the candidate', { skip: torchUnavailable() }, () => {
  const problem = fixturePath('problems', 'scale-add.py');
  const real = { KFORGE_PYTHON: REAL_PYTHON, KFORGE_WORKER_DIR: path.join(REPOSITORY_ROOT, 'worker') };
  const plain = (body: string): string => {
    const file = path.join(cacheRoot, `plain-${body.length}.py`);
    writeFileSync(
      file,
      `import torch\n\nclass ModelNew(torch.nn.Module):\n    def __init__(self, features):\n        super().__init__()\n        self.scale = torch.nn.Parameter(torch.randn(features))\n        self.bias = torch.nn.Parameter(torch.randn(features))\n\n    def forward(self, x):\n        return ${body}\n`,
    );
    return file;
  };

  it('a plain PyTorch ModelNew is rejected under kernelbench, naming --guard-policy pytorch, which measures it', async () => {
    const candidate = plain('torch.relu(x * self.scale + self.bias)');
    const rejected = await kforge(['eval', problem, candidate, '--backend', 'cpu', '--no-timing'], real);
    assert.equal(rejected.exitCode, 1, String(rejected.stderr));
    const stdout = String(rejected.stdout);
    assert.match(stdout, /^rejected {2}plain-\d+\.py against scale-add\.py/);
    assert.match(stdout, /\[torch-fallback\] .*\(the guard policy `pytorch` would measure it as a PyTorch program, no kernel of its own required\)$/m);
    assert.match(stdout, /^ {2}to measure it as it is: run again with --guard-policy pytorch /m);
    const measured = await kforge(['eval', problem, candidate, '--backend', 'cpu', '--no-timing', '--guard-policy', 'pytorch', '--json'], real);
    assert.equal(measured.exitCode, 0, String(measured.stderr));
    assert.equal(JSON.parse(String(measured.stdout)).verdict, 'correct');
  });

  it('a plain PyTorch ModelNew of the wrong shape is incorrect (shape) first, the rejection after', async () => {
    const candidate = plain('torch.relu(x * self.scale + self.bias)[:, :10]');
    const result = await kforge(['eval', problem, candidate, '--backend', 'cpu', '--no-timing', '--json'], real);
    assert.equal(result.exitCode, 1, String(result.stderr));
    const parsed = evaluationResultSchema.parse(JSON.parse(String(result.stdout)));
    assert.equal(parsed.verdict, 'incorrect');
    assert.deepEqual(
      parsed.reasons.map((reason) => reason.check),
      ['shape', 'torch-fallback'],
    );
    assert.match(parsed.reasons[0]!.message, /the output has shape \(8, 10\), the reference's is \(8, 64\)/);
    assert.equal(parsed.correctness?.passed, 0);
  });
});

describe('kforge eval --set over a batch of several problems', () => {
  /** Two problems the fake worker accepts: a matrix product with `N`, an elementwise one with `batch_size`. */
  const folder = path.join(cacheRoot, 'mixed');
  mkdirSync(folder, { recursive: true });
  const matmul = path.join(folder, '1_Square_matrix_multiplication_.py');
  const relu = path.join(folder, '19_ReLU.py');
  writeFileSync(matmul, '# A problem the fake reference accepts.\nN = 2048\nKFORGE_PRESETS = {}\n\n\nclass Model: pass\n');
  writeFileSync(relu, '# A problem the fake reference accepts.\nbatch_size = 4096\ndim = 393216\n\n\nclass Model: pass\n');
  const pairs = [`${matmul}:${candidate('correct')}`, `${relu}:${candidate('correct')}`];
  const overridesOf = (stdout: string): Record<string, unknown> =>
    Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { problem: string; problem_overrides?: unknown })
        .map((result) => [path.basename(result.problem), result.problem_overrides ?? null]),
    );

  it('gives each problem the names it has, upper case included, and says which was left out of which', async () => {
    const result = await kforge(['eval', ...pairs, '--backend', 'cpu', '--json', '--set', 'batch_size=64', '--set', 'N=512']);
    assert.equal(result.exitCode, 0, String(result.stderr));
    assert.deepEqual(overridesOf(String(result.stdout)), { '1_Square_matrix_multiplication_.py': { N: 512 }, '19_ReLU.py': { batch_size: 64 } });
    const stderr = String(result.stderr);
    assert.match(
      stderr,
      /^kforge eval: --set batch_size=64 left out for 1_Square_matrix_multiplication_\.py, which has no module-level constant `batch_size` \(its constants: N\)$/m,
    );
    assert.match(stderr, /^kforge eval: --set N=512 left out for 19_ReLU\.py, which has no module-level constant `N` \(its constants: batch_size, dim\)$/m);
    assert.doesNotMatch(stderr, /did not build|invalid_input/);
  });

  it('scopes a value to one problem; a problem with none of the names says so and keeps its sizes', async () => {
    const scoped = await kforge(['eval', ...pairs, '--backend', 'cpu', '--json', '--set', '1_Square_matrix_multiplication_:N=256']);
    assert.equal(scoped.exitCode, 0, String(scoped.stderr));
    assert.deepEqual(overridesOf(String(scoped.stdout)), { '1_Square_matrix_multiplication_.py': { N: 256 }, '19_ReLU.py': null });
    const none = await kforge(['eval', ...pairs, '--backend', 'cpu', '--json', '--set', 'dim=8']);
    assert.equal(none.exitCode, 0, String(none.stderr));
    assert.match(String(none.stderr), /--set dim=8 left out for 1_Square_matrix_multiplication_\.py, .*; it is evaluated at its own sizes$/m);
  });

  it('refuses, before evaluating anything, a name no problem has and a scope that names none', async () => {
    const unknown = await kforge(['eval', ...pairs, '--backend', 'cpu', '--set', 'M=64']);
    assert.equal(unknown.exitCode, 2);
    assert.equal(String(unknown.stdout), '');
    assert.equal(
      String(unknown.stderr).trim(),
      'kforge eval: --set M=64: none of the 2 problems has a module-level constant `M` (their constants: N, batch_size, dim; did you mean N?)',
    );
    const scope = await kforge(['eval', ...pairs, '--backend', 'cpu', '--set', '19_relu:dim=8']);
    assert.equal(scope.exitCode, 2);
    assert.match(String(scope.stderr), /^kforge eval: --set 19_relu:dim=8: no problem of this command is `19_relu` .*; did you mean 19_ReLU\?\)$/);
  });
});

describe('kforge eval: a GPU backend on a machine without a visible GPU', () => {
  it('says so in one sentence before starting any worker, exit 2', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('correct'), '--backend', 'cuda'], { CUDA_VISIBLE_DEVICES: '' });
    assert.equal(result.exitCode, 2);
    assert.equal(result.stdout, '');
    const lines = String(result.stderr).trim().split('\n');
    assert.equal(lines.length, 1, String(result.stderr));
    assert.match(lines[0]!, /^kforge eval: --backend cuda needs an NVIDIA GPU and none is visible here .*; use --backend cpu, or run on a GPU machine/);
  });
});

describe('kforge eval --json: exactly one JSON object on stdout', () => {
  it('prints a correct result that validates against the verdict schema, exit 0', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('correct'), '--backend', 'cpu', '--perf-trials', '12', '--json']);
    assert.equal(result.exitCode, 0, String(result.stderr));
    const stdout = String(result.stdout);
    assert.equal(stdout.trim().split('\n').length, 1, 'one line of JSON, nothing else');
    const parsed = evaluationResultSchema.parse(JSON.parse(stdout));
    assert.equal(parsed.verdict, 'correct');
    assert.equal(parsed.backend, 'cpu');
    assert.equal(parsed.timing?.candidate_ms.n, 12);
    assert.equal(parsed.timing?.speedup_vs_best, 2);
    for (const field of ['verdict', 'reasons', 'problem', 'candidate', 'backend', 'precision', 'correctness', 'timing', 'diagnostics', 'environment']) {
      assert.ok(field in parsed, `missing ${field}`);
    }
    assert.match(String(result.stderr), /building the candidate/, 'progress goes to stderr');
  });

  it('exits 1 for other verdicts and keeps the compiler diagnostics', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('compile_error'), '--backend', 'cpu', '--json']);
    assert.equal(result.exitCode, 1);
    const parsed = evaluationResultSchema.parse(JSON.parse(String(result.stdout)));
    assert.equal(parsed.verdict, 'compile_error');
    assert.equal(parsed.timing, undefined);
    assert.match(parsed.diagnostics.compiler ?? '', /nvcc fatal/);
  });

  it("accepts --precision native (the problem's own dtypes) and says where the tolerance came from", async () => {
    const result = await kforge(['eval', PROBLEM, candidate('correct'), '--backend', 'cpu', '--precision', 'native', '--no-timing', '--json']);
    assert.equal(result.exitCode, 0, String(result.stderr));
    const parsed = evaluationResultSchema.parse(JSON.parse(String(result.stdout)));
    assert.equal(parsed.precision, 'native');
    assert.equal(parsed.correctness?.tolerance_source, 'profile');
  });

  it('defaults the backend to cpu when no GPU is visible', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('correct'), '--no-timing', '--json'], { CUDA_VISIBLE_DEVICES: '' });
    assert.equal(result.exitCode, 0, String(result.stderr));
    assert.equal(JSON.parse(String(result.stdout)).backend, 'cpu');
    assert.match(String(result.stderr), /no GPU is visible, so the backend is cpu/);
  });
});

/** Whether a process's working directory lies under `root` (the workers run in scratch directories there). */
function isInScratchOf(pid: number, root: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`).startsWith(root);
  } catch {
    return false;
  }
}

describe('kforge eval: interrupted', () => {
  it('Ctrl-C stops the workers and exits 130', async () => {
    const scratchRoot = path.join(cacheRoot, 'interrupted');
    mkdirSync(scratchRoot, { recursive: true });
    const child = kforge(['eval', PROBLEM, candidate('hang-build'), '--backend', 'cpu'], { TMPDIR: scratchRoot });
    let stderr = '';
    let interrupted = false;
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!interrupted && stderr.includes('building the candidate …') && child.pid) {
        interrupted = true;
        process.kill(child.pid, 'SIGINT');
      }
    });
    const result = await child;
    assert.equal(result.exitCode, 130, stderr);
    assert.match(stderr, /kforge eval: cancelled; the workers were stopped/);
    const leftover = await execa('pgrep', ['-f', `kforge_worker candidate`], { reject: false });
    const workers = String(leftover.stdout)
      .trim()
      .split('\n')
      .filter(Boolean)
      .filter((pid) => isInScratchOf(Number(pid), scratchRoot));
    assert.deepEqual(workers, [], 'no worker outlives kforge');
  });
});

describe('kforge eval: the human summary', () => {
  it('shows the verdict, the reasons and the error profile', async () => {
    const result = await kforge(['eval', PROBLEM, candidate('incorrect'), '--backend', 'cpu']);
    assert.equal(result.exitCode, 1);
    const stdout = String(result.stdout);
    assert.match(stdout, /^incorrect {2}candidate-incorrect\.py against problem\.py/);
    assert.match(stdout, /\[mismatch\] the output: 412 of 512 elements differ/);
    assert.match(stdout, /error profile: 0\/5 trials passed, max abs error 0\.530/);
    assert.match(stdout, /stages: reference 3\.0 ms/);
  });

  it('shows the timing table and the known cause of a build failure', async () => {
    const correct = String((await kforge(['eval', PROBLEM, candidate('correct'), '--backend', 'cpu', '--perf-trials', '10'])).stdout);
    assert.match(correct, /candidate +1\.000 +\[1\.000, 1\.000\] +10/);
    assert.match(correct, /eager +2\.000 .* 2\.00x/);
    assert.match(correct, /speedup vs best baseline: 2\.00x/);
    const failed = String((await kforge(['eval', PROBLEM, candidate('compile_error'), '--backend', 'cpu'])).stdout);
    assert.match(failed, /first compiler error: Unsupported gpu architecture 'sm_70'/);
    assert.match(failed, /known cause: the candidate hard-codes -arch=sm_70/);
  });
});
