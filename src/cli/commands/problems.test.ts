import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { REPOSITORY_ROOT } from '../../core/repository-paths.js';
import type { ProblemAudit } from '../../eval/problem/problem-audit.js';
import { registerProblemsCommand, type ProblemsCommandDependencies } from './problems.js';

let folder: string;

before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-problems-cli-'));
  // Malformed: a reference without get_inputs().
  await writeFile(path.join(folder, 'no_inputs.py'), 'import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n');
  // Stand-ins for a Python: one without torch, one that never finishes.
  await writeFile(path.join(folder, 'python-without-torch'), '#!/bin/sh\necho "ModuleNotFoundError: No module named \'torch\'" >&2\nexit 1\n');
  await writeFile(path.join(folder, 'python-that-hangs'), '#!/bin/sh\nexec sleep 60\n');
  await chmod(path.join(folder, 'python-without-torch'), 0o755);
  await chmod(path.join(folder, 'python-that-hangs'), 0o755);
});
after(() => rm(folder, { recursive: true, force: true }));

async function problems(
  args: string[],
  dependencies: ProblemsCommandDependencies = {},
): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  const outcome = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().name('kforge').exitOverride();
  registerProblemsCommand(program, {
    stdout: { write: (text: string) => (outcome.stdout += text) },
    stderr: { write: (text: string) => (outcome.stderr += text) },
    setExitCode: (code) => (outcome.exitCode = code),
    environment: { PATH: process.env.PATH, ...(process.env.KFORGE_PYTHON ? { KFORGE_PYTHON: process.env.KFORGE_PYTHON } : {}) },
    cwd: REPOSITORY_ROOT,
    ...dependencies,
  });
  await program.parseAsync(['problems', ...args], { from: 'user' });
  return outcome;
}

interface AuditJson {
  problems: Array<{
    problem: string;
    status: string;
    findings: Array<{ level: string; check: string; message: string }>;
    audit: { degenerate: boolean; passing: string[]; preset: string } | null;
  }>;
  errors: number;
  warnings: number;
}

describe('kforge problems list', () => {
  it('lists the shipped problems with level, name and presets', async () => {
    const outcome = await problems(['list']);
    assert.equal(outcome.exitCode, 0, outcome.stderr);
    assert.match(outcome.stdout, /^level\s+name\s+presets\s+what\n/);
    assert.match(outcome.stdout, /\nlevel1\s+01_relu\s+cpu, gpu\s+ReLU, elementwise: y = max\(x, 0\)\.\n/);
    assert.match(outcome.stdout, /\nlevel3\s+03_small_cnn\s+cpu, gpu\s+/);
    const json = JSON.parse((await problems(['list', '--json'])).stdout) as { problems: Array<{ level: string; name: string; presets: string[] }> };
    assert.equal(json.problems.length, 18);
    assert.deepEqual(new Set(json.problems.map((problem) => problem.level)), new Set(['level1', 'level2', 'level3']));
    assert.ok(json.problems.every((problem) => problem.presets.join() === 'cpu,gpu'));
  });
});

describe('kforge problems list: subsets', () => {
  it('--filter, --limit and --problems FILE pick problems of the suite', async () => {
    const names = async (args: string[]) => {
      const outcome = await problems(['list', '--json', ...args]);
      assert.equal(outcome.exitCode, 0, outcome.stderr);
      return (JSON.parse(outcome.stdout) as { problems: Array<{ name: string }> }).problems.map((problem) => problem.name);
    };
    assert.deepEqual(await names(['--filter', 'relu']), ['01_relu', '02_conv_relu_maxpool']);
    assert.deepEqual(await names(['--filter', 'level1/*', '--limit', '2']), ['01_relu', '02_gelu']);
    const list = path.join(folder, 'subset.txt');
    await writeFile(list, `${path.join(REPOSITORY_ROOT, 'problems', 'level2')}\n${path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py')}\n`);
    assert.deepEqual(await names(['--problems', list, '--limit', '3']), ['02_gelu', '01_gemm_bias_gelu', '02_conv_relu_maxpool']);
    const none = await problems(['list', '--filter', 'nothing-like-this']);
    assert.deepEqual(
      [none.exitCode, none.stderr.trim()],
      [2, "kforge problems: no problem matches --filter nothing-like-this (of 18); it is matched against each problem's name and path"],
    );
    const bad = await problems(['list', '--limit', '0']);
    assert.deepEqual([bad.exitCode, bad.stderr.trim()], [2, 'kforge problems: expected `--limit` to be a positive integer, got `0`']);
  });
});

describe('kforge problems audit', () => {
  it('--filter and --limit choose which problems are audited', async () => {
    const seen: string[] = [];
    const outcome = await problems(['audit', '--filter', 'level2', '--limit', '2', '--json'], {
      auditProblem: async (file) => {
        seen.push(path.relative(REPOSITORY_ROOT, file));
        return { problemPath: file, findings: [], audit: null, durationMs: 1 };
      },
    });
    assert.equal(outcome.exitCode, 0, outcome.stderr);
    assert.deepEqual(seen, ['problems/level2/01_gemm_bias_gelu.py', 'problems/level2/02_conv_relu_maxpool.py']);
  });

  it('audits shipped and malformed problems through the worker, and exits 1 on an error-level finding', { timeout: 900_000 }, async () => {
    // Two shipped problems whose cpu sizes are small (the audit of a 2^23-element problem can take
    // minutes on a loaded 2-core machine), and a malformed one.
    const malformed = path.join(folder, 'no_inputs.py');
    const outcome = await problems([
      'audit',
      'problems/level1/09_matmul_square.py',
      'problems/level2/01_gemm_bias_gelu.py',
      malformed,
      '--json',
      '--jobs',
      '2',
      '--timeout',
      '600',
    ]);
    assert.equal(outcome.exitCode, 1, outcome.stderr);
    const json = JSON.parse(outcome.stdout) as AuditJson;
    assert.deepEqual(
      json.problems.map((problem) => [path.basename(problem.problem), problem.status]),
      [
        ['09_matmul_square.py', 'ok'],
        ['01_gemm_bias_gelu.py', 'ok'],
        ['no_inputs.py', 'error'],
      ],
    );
    const [matmul, gemm, broken] = json.problems;
    assert.deepEqual([matmul!.findings, matmul!.audit?.degenerate, matmul!.audit?.preset], [[], false, 'cpu']);
    assert.equal(gemm!.audit?.degenerate, false);
    assert.deepEqual([broken!.findings[0]?.level, broken!.findings[0]?.check, broken!.audit], ['error', 'problem-load', null]);
    assert.match(broken!.findings[0]?.message ?? '', /defines no function get_inputs\(\)/);
    assert.deepEqual([json.errors, json.warnings], [1, 0]);
    assert.match(outcome.stderr, /kforge problems audit: problems\/level1\/09_matmul_square\.py ok \(\d+\.\d s\)/);
  });

  it('prints a table of problems and their findings, and exits 0 without errors', async () => {
    const audits: Record<string, ProblemAudit['findings']> = {
      '01_relu': [],
      '05_softmax': [{ level: 'warning', check: 'degenerate', message: 'zeros pass' }],
    };
    const seen: Array<{ file: string; preset: string | undefined; tolerance: unknown }> = [];
    const outcome = await problems(['audit', 'problems/level1/01_relu.py', 'problems/level1/05_softmax.py', '--tolerance', 'strict'], {
      auditProblem: async (file, options) => {
        seen.push({ file: path.basename(file), preset: options.preset, tolerance: options.tolerance });
        return { problemPath: file, findings: audits[path.basename(file, '.py')] ?? [], audit: null, durationMs: 1200 };
      },
    });
    assert.equal(outcome.exitCode, 0, outcome.stderr);
    assert.deepEqual(seen[0], { file: '01_relu.py', preset: 'cpu', tolerance: { atol: 1e-4, rtol: 1e-4 } });
    assert.match(outcome.stdout, /^problem\s+status\s+check\s+finding\n/);
    assert.match(outcome.stdout, /\nproblems\/level1\/01_relu\.py\s+ok\s+—\s+—\n/);
    assert.match(outcome.stdout, /\nproblems\/level1\/05_softmax\.py\s+warning\s+degenerate\s+zeros pass\n/);
    assert.match(outcome.stdout, /\n2 problems audited: 0 with errors, 1 with warnings\n$/);
  });

  it('the shipped suite is audited when no path is given', async () => {
    const seen: string[] = [];
    const outcome = await problems(['audit', '--json'], {
      auditProblem: async (file) => {
        seen.push(path.relative(REPOSITORY_ROOT, file));
        return { problemPath: file, findings: [], audit: null, durationMs: 1 };
      },
    });
    assert.equal(outcome.exitCode, 0);
    assert.equal(seen.length, 18);
    assert.deepEqual(seen.slice(0, 2), ['problems/level1/01_relu.py', 'problems/level1/02_gelu.py']);
  });

  it('a Python without torch, a missing one and a missing path are misuse (exit 2) naming the fix', async () => {
    const withoutTorch = await problems(['audit', 'problems/level1/01_relu.py'], {
      environment: { PATH: process.env.PATH, KFORGE_PYTHON: path.join(folder, 'python-without-torch') },
    });
    assert.equal(withoutTorch.exitCode, 2);
    assert.match(withoutTorch.stderr, /python-without-torch cannot import torch; set KFORGE_PYTHON to a Python with PyTorch/);
    const missing = await problems(['audit', 'problems/level1/01_relu.py'], {
      environment: { PATH: process.env.PATH, KFORGE_PYTHON: path.join(folder, 'no-such-python') },
    });
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /cannot start .*no-such-python for the problem audit/);
    const nowhere = await problems(['audit', 'nowhere.py']);
    assert.deepEqual([nowhere.exitCode, nowhere.stderr.trim()], [2, 'kforge problems: no such file or folder: nowhere.py']);
    const jobs = await problems(['audit', '--jobs', '0']);
    assert.deepEqual([jobs.exitCode, jobs.stderr.trim()], [2, 'kforge problems: expected `--jobs` to be a positive integer, got `0`']);
  });

  it('an audit past its limit is killed and reported as an error', async () => {
    const startedAt = Date.now();
    const outcome = await problems(['audit', 'problems/level1/01_relu.py', '--timeout', '0.5', '--json'], {
      environment: { PATH: process.env.PATH, KFORGE_PYTHON: path.join(folder, 'python-that-hangs') },
    });
    // The stand-in sleeps 60 s: the size check before the audit is held to the limit as well.
    const elapsedMs = Date.now() - startedAt;
    assert.ok(elapsedMs < 30_000, `the audit answered after ${elapsedMs} ms, not within its limit of 0.5 s (twice: size check, audit)`);
    assert.equal(outcome.exitCode, 1);
    const json = JSON.parse(outcome.stdout) as AuditJson;
    assert.equal(json.problems[0]?.findings[0]?.check, 'audit-timeout');
    assert.match(json.problems[0]?.findings[0]?.message ?? '', /did not finish within its limit \(0\.5 s\)/);
  });

  it('a reference too slow for the limit is reported after its first trial, with a batch size that fits', { timeout: 120_000 }, async () => {
    // Five seeds of a 3 s trial (two 1.5 s forwards) after Python's start and torch's import: more
    // than 15 s, 1.25 times the limit of 12 s, whose first trial ends within it unless the start
    // takes 9 s. Without the pace the audit would run into the limit and say only `audit-timeout`.
    const slow = path.join(REPOSITORY_ROOT, 'test-support', 'fixtures', 'machine-faults', 'reference-too-slow.py');
    const outcome = await problems(['audit', slow, '--timeout', '12', '--json']);
    assert.equal(outcome.exitCode, 1, outcome.stderr);
    const json = JSON.parse(outcome.stdout) as AuditJson;
    const finding = json.problems[0]?.findings[0];
    assert.equal(finding?.check, 'audit-too-slow', JSON.stringify(finding));
    assert.match(
      finding?.message ?? '',
      /^the reference's first trial took \d+(\.\d)? s at these sizes on this machine, and the audit computes 5 trials: about \d+(\.\d)? s, more than its limit of 12 s; at --set batch_size=(1|2|4|8|16) it would take about 6\.0 s or less$/,
    );
  });
});
