import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { Command } from 'commander';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator, type FakeEvaluatorOptions } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel, type FakeStep } from '../../../test-support/fake-kernel-model.js';
import { fixturePath, REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON } from '../../../test-support/torch-python.js';
import { registerOptimizeCommand, type OptimizeCommandDependencies } from './optimize.js';
import { DRY_RUN_LIMIT_HINT } from '../sizing/optimize-dry-run.js';

/** The flags `kforge optimize` takes. */
const optimizeFlags = new Set(registerOptimizeCommand(new Command()).options.map((option) => option.long ?? ''));

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-optimize-cli-'));
  await mkdir(path.join(folder, 'level1'));
  for (const name of ['01_relu.py', '02_gelu.py']) await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', name), path.join(folder, 'level1', name));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

function kernel(marker: string): string {
  return `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
}

interface Harness {
  stdout: string[];
  stderr: string[];
  exitCode: number | undefined;
  signals: EventEmitter;
  evaluator: FakeEvaluator;
  run(...args: string[]): Promise<void>;
}

/** `realModel`: the command's own model wiring (the files provider as shipped) instead of a fake. */
function harness(
  options: {
    replies?: FakeStep[];
    tty?: boolean;
    createModel?: OptimizeCommandDependencies['createModel'];
    realModel?: boolean;
    judge?: FakeEvaluatorOptions['judge'];
    auditProblem?: OptimizeCommandDependencies['auditProblem'];
    environment?: NodeJS.ProcessEnv;
  } = {},
): Harness {
  const state: Harness = {
    stdout: [],
    stderr: [],
    exitCode: undefined,
    signals: new EventEmitter(),
    evaluator: new FakeEvaluator(options.judge ? { judge: options.judge } : {}),
    run: async (...args: string[]) => {
      const program = new Command().exitOverride();
      registerOptimizeCommand(program, {
        createEvaluator: () => state.evaluator,
        ...(options.realModel ? {} : { createModel: options.createModel ?? (async () => new FakeKernelModel({ replies: options.replies ?? [] })) }),
        stdout: { write: (text: string) => state.stdout.push(text) },
        stderr: { write: (text: string) => state.stderr.push(text) },
        stderrIsTerminal: options.tty ?? false,
        detectGpus: async () => [],
        environment: options.environment ?? {},
        ...(options.auditProblem ? { auditProblem: options.auditProblem } : {}),
        setExitCode: (code) => {
          state.exitCode = code;
        },
        cwd: folder,
        signals: state.signals as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
        exit: () => undefined,
      });
      await program.parseAsync(['node', 'kforge', 'optimize', ...args]);
    },
  };
  return state;
}

test('--json prints exactly one object: run_id and per problem its candidate count and best kernel', async () => {
  const cli = harness({ replies: [kernel('correct 0.5'), kernel('compile_error')] });
  await cli.run('level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1', '--json');
  assert.equal(cli.exitCode, 0);
  assert.equal(cli.stdout.length, 1);
  const output = JSON.parse(cli.stdout[0]!) as {
    run_id: string;
    problems: Array<{ problem: string; candidate_count: number; best: { verdict: string; path: string; timing: unknown } | null }>;
  };
  assert.deepEqual(Object.keys(output), ['run_id', 'problems']);
  assert.deepEqual(
    output.problems.map((problem) => [path.basename(problem.problem), problem.candidate_count, problem.best?.verdict]),
    [
      ['01_relu.py', 1, 'correct'],
      ['02_gelu.py', 1, 'compile_error'],
    ],
  );
  assert.equal(output.problems[0]!.best?.path, path.join(folder, 'kforge-out', '01_relu.py'));
  assert.deepEqual(Object.keys(output.problems[0]!.best!), ['verdict', 'path', 'timing']);
  assert.equal(output.problems[1]!.best?.timing, null);
  assert.match(await readFile(path.join(folder, 'kforge-out', '01_relu.verdict.json'), 'utf8'), /"verdict": "correct"/);
  const lines = cli.stderr.join('').trim().split('\n');
  assert.ok(
    lines.every((line) => /^event=[a-z-]+( [a-z_]+=\S+)*/.test(line)),
    'one logfmt line per event when stderr is not a terminal',
  );
  assert.ok(lines.some((line) => line.startsWith('event=candidate-evaluated problem=01_relu') && line.includes('verdict=correct')));
  const store = await SqliteRunStore.open({ path: path.join(folder, '.kforge', 'kforge.db') });
  try {
    assert.equal((await store.getRun(output.run_id))?.status, 'finished');
  } finally {
    await store.close();
  }
});

test('without --json the table gives per-problem results and the suite totals', async () => {
  // Wide enough for every column (the fitting to narrower widths has its own test).
  const cli = harness({ replies: [kernel('correct 0.5'), kernel('incorrect')], environment: { COLUMNS: '200' } });
  await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1');
  const table = cli.stdout.join('');
  assert.match(table, /problem\s+best verdict\s+candidates\s+correct\s+best ms\s+vs eager\s+vs compile\s+vs best\s+tokens\s+cost\s+device s/);
  assert.match(table, /01_relu\s+correct\s+1\s+1\/1\s+0\.5\s+2\.00x\s+—\s+2\.00x/);
  assert.match(table, /02_gelu\s+incorrect\s+1\s+0\/1\s+—/);
  assert.match(table, /1 of 2 problems correct \(50%\)/);
  assert.match(table, /fast_0 50% {2}fast_1 50% {2}fast_1\.5 50% {2}fast_2 0%/);
  assert.match(table, /geomean speedup: eager 2\.00x, compile —, best 2\.00x/);
});

test('a bad flag value or a missing problem is a usage error naming what to fix', async () => {
  const bad = harness();
  await bad.run('level1', '--provider', 'vllm', '--max-candidates', '-3');
  assert.equal(bad.exitCode, 2);
  assert.match(bad.stderr.join(''), /expected `--max-candidates` to be a positive integer, got `-3`/);
  const strategy = harness();
  await strategy.run('level1', '--provider', 'vllm', '--strategy', 'beam');
  assert.match(strategy.stderr.join(''), /expected `--strategy` to be one of refine, sample, ideas, got `beam`/);
  const provider = harness();
  await provider.run('level1', '--provider', 'file', '--dir', 'replies');
  assert.equal(provider.exitCode, 2);
  assert.match(provider.stderr.join(''), /expected `--provider` to be one of .*files, got `file` \(did you mean --provider files\?\)/);
  const missing = harness();
  await missing.run('nowhere.py', '--provider', 'vllm');
  assert.equal(missing.exitCode, 2);
  assert.match(missing.stderr.join(''), /no such file or folder: nowhere\.py/);
  const resume = harness();
  await resume.run('level1', '--resume', 'abc');
  assert.match(resume.stderr.join(''), /--resume continues run `abc` with its stored settings: drop the problem arguments/);
  const unknown = harness();
  await unknown.run('--resume', 'no-such-run');
  assert.equal(unknown.exitCode, 2);
  assert.match(unknown.stderr.join(''), /no run `no-such-run`/);
});

test('Ctrl-C stops the run gracefully, and --resume finishes it', async () => {
  const cli = harness({
    replies: [
      kernel('correct 0.5'),
      () => {
        cli.signals.emit('SIGINT');
        return kernel('correct 0.4');
      },
    ],
  });
  await cli.run('level1/01_relu.py', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '3', '--json');
  assert.equal(cli.exitCode, 130);
  const runId = (JSON.parse(cli.stdout[0]!) as { run_id: string }).run_id;
  assert.match(cli.stderr.join(''), /stopping; unfinished work stays in the store for --resume/);
  assert.equal(cli.evaluator.calls.length, 1, 'the second candidate was stored but its evaluation cancelled');

  const resumed = harness({ replies: [kernel('correct 0.2')] });
  await resumed.run('--resume', runId, '--json');
  assert.equal(resumed.exitCode, 0);
  const output = JSON.parse(resumed.stdout[0]!) as { problems: Array<{ candidate_count: number; best: { timing: { candidate_ms: { median: number } } } }> };
  assert.equal(output.problems[0]!.candidate_count, 3);
  assert.equal(output.problems[0]!.best.timing.candidate_ms.median, 0.2);
  assert.equal(resumed.evaluator.calls.length, 2, 'the cancelled candidate and the new one; the first is not evaluated again');
});

test('on a terminal the progress is a live view redrawn in place', async () => {
  const cli = harness({ replies: [kernel('correct 0.5')], tty: true });
  await cli.run('level1/01_relu.py', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1');
  const text = cli.stderr.join('');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\u001b) starts the ANSI escape sequences this test reads.
  assert.match(text, /\u001b\[2K\u001b\[1A/, 'earlier frames are erased');
  assert.match(text, /1 of 1 problems done, finished/);
  assert.match(text, /01_relu\s+done: max candidates\s+\d+s\s+1\s+2\.00x/);
  assert.doesNotMatch(text, /event=/, 'no logfmt lines on a terminal');
});

test('the files provider replays shipped candidates with no key (the README command)', async () => {
  const replies = path.join(folder, 'replies');
  await mkdir(replies);
  await writeFile(path.join(replies, '1.py'), 'import torch\n# fake-verdict: compile_error\nclass ModelNew(torch.nn.Module):\n    pass\n');
  await writeFile(path.join(replies, '2.py'), 'import torch\n# fake-verdict: correct 0.25\nclass ModelNew(torch.nn.Module):\n    pass\n');
  const real = harness({ realModel: true });
  await real.run('level1/01_relu.py', '--provider', 'files', '--dir', replies, '--backend', 'cpu', '--json');
  assert.equal(real.exitCode, 0, real.stderr.join(''));
  const output = JSON.parse(real.stdout[0]!) as { problems: Array<{ candidate_count: number; best: { verdict: string } }> };
  assert.equal(output.problems[0]!.candidate_count, 2, 'the folder ran out after two replies');
  assert.equal(output.problems[0]!.best.verdict, 'correct');
});

test('the evaluator flags of kforge eval reach every evaluation request', async () => {
  const cli = harness({ replies: [kernel('correct 0.5')] });
  await cli.run(
    'level1/01_relu.py',
    '--provider',
    'vllm',
    '--backend',
    'cpu',
    '--max-candidates',
    '1',
    '--precision',
    'fp16',
    '--tolerance',
    'strict',
    '--trials',
    '3',
    '--perf-trials',
    '7',
    '--warmup',
    '2',
    '--warmup-ms',
    '150',
    '--preset',
    'cpu',
    '--timeout-build',
    '900',
  );
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  const { request } = cli.evaluator.calls[0]!;
  assert.deepEqual(
    {
      backend: request.backend,
      precision: request.precision,
      tolerance: request.tolerance,
      trials: request.trials,
      perfTrials: request.perfTrials,
      warmupTrials: request.warmupTrials,
      warmupMs: request.warmupMs,
      preset: request.preset,
      timeouts: request.timeoutsSeconds,
    },
    {
      backend: 'cpu',
      precision: 'fp16',
      tolerance: 'strict',
      trials: 3,
      perfTrials: 7,
      warmupTrials: 2,
      warmupMs: 150,
      preset: 'cpu',
      timeouts: { build: 900 },
    },
  );
  const bad = harness();
  await bad.run('level1', '--provider', 'vllm', '--timeout-build', 'soon');
  assert.match(bad.stderr.join(''), /expected `--timeout-build` to be a positive number, got `soon`/);
  const negative = harness();
  await negative.run('level1', '--provider', 'vllm', '--warmup-ms', '-1');
  assert.match(negative.stderr.join(''), /expected `--warmup-ms` to be a non-negative number of milliseconds, got `-1`/);
});

const replyFile = (marker: string): string => `import torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    pass\n`;

async function storedCandidates(runId: string): Promise<Array<{ problem: string; marker: string }>> {
  const store = await SqliteRunStore.open({ path: path.join(folder, '.kforge', 'kforge.db') });
  try {
    const names = new Map((await store.listRunProblems(runId)).map((problem) => [problem.hash, problem.name]));
    return (await store.listCandidates(runId)).map((candidate) => ({
      problem: names.get(candidate.problemHash) ?? '?',
      marker: /fake-verdict: (.*)/.exec(candidate.source)?.[1] ?? '',
    }));
  } finally {
    await store.close();
  }
}

test('--guard-policy reaches every evaluation request and is kept by --resume', async () => {
  const cli = harness({
    replies: [
      kernel('correct 0.5'),
      () => {
        cli.signals.emit('SIGINT');
        return kernel('correct 0.4');
      },
    ],
  });
  await cli.run('level1/01_relu.py', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '3', '--guard-policy', 'strict', '--json');
  assert.equal(cli.exitCode, 130, cli.stderr.join(''));
  const runId = (JSON.parse(cli.stdout[0]!) as { run_id: string }).run_id;
  assert.deepEqual(
    cli.evaluator.calls.map((call) => call.request.guardPolicy),
    ['strict'],
  );
  const store = await SqliteRunStore.open({ path: path.join(folder, '.kforge', 'kforge.db') });
  try {
    assert.equal(((await store.getRun(runId))?.config.evaluation as { guardPolicy?: string } | undefined)?.guardPolicy, 'strict');
  } finally {
    await store.close();
  }
  const resumed = harness({ replies: [kernel('correct 0.2')] });
  await resumed.run('--resume', runId, '--json');
  assert.equal(resumed.exitCode, 0, resumed.stderr.join(''));
  assert.deepEqual(
    resumed.evaluator.calls.map((call) => call.request.guardPolicy),
    ['strict', 'strict'],
  );

  const plain = harness({ replies: [kernel('correct 0.5')] });
  await plain.run('level1/01_relu.py', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1');
  assert.equal(plain.evaluator.calls[0]!.request.guardPolicy, 'kernelbench', 'no flag: the default policy, stored with the run');
  const bad = harness();
  await bad.run('level1', '--provider', 'vllm', '--guard-policy', 'lax');
  assert.equal(bad.exitCode, 2);
  assert.match(bad.stderr.join(''), /expected `--guard-policy` to be one of kernelbench, own-kernels, strict, permissive, pytorch, got `lax`/);
  const again = harness();
  await again.run('--resume', runId, '--guard-policy', 'permissive');
  assert.match(again.stderr.join(''), /drop --guard-policy/);
});

test('the files provider resumes at the next unused reply, not the first file', async () => {
  const replies = path.join(folder, 'replies');
  await mkdir(replies);
  const markers = ['correct 0.5', 'compile_error', 'correct 0.25', 'incorrect'];
  for (const [index, marker] of markers.entries()) await writeFile(path.join(replies, `${index + 1}.py`), replyFile(marker));
  let stopper: Harness | undefined;
  const judge: FakeEvaluatorOptions['judge'] = async (source, request, index) => {
    if (index === 1) stopper?.signals.emit('SIGINT');
    const { judgeByMarker } = await import('../../../test-support/fake-evaluator.js');
    return judgeByMarker(source, request);
  };
  const cli = harness({ realModel: true, judge });
  stopper = cli;
  await cli.run('level1/01_relu.py', '--provider', 'files', '--dir', replies, '--backend', 'cpu', '--max-candidates', '10', '--json');
  assert.equal(cli.exitCode, 130, cli.stderr.join(''));
  const runId = (JSON.parse(cli.stdout[0]!) as { run_id: string }).run_id;
  assert.deepEqual(
    (await storedCandidates(runId)).map((candidate) => candidate.marker),
    markers.slice(0, 2),
  );

  const resumed = harness({ realModel: true });
  await resumed.run('--resume', runId, '--json');
  assert.equal(resumed.exitCode, 0, resumed.stderr.join(''));
  assert.deepEqual(
    (await storedCandidates(runId)).map((candidate) => candidate.marker),
    markers,
    'each file served once over both parts of the run',
  );
  assert.deepEqual(
    resumed.evaluator.calls.map((call) => /fake-verdict: (.*)/.exec(call.source)?.[1]),
    markers.slice(1),
    'the cancelled candidate, then the two unused replies',
  );
  const output = JSON.parse(resumed.stdout[0]!) as { problems: Array<{ best: { timing: { candidate_ms: { median: number } } } }> };
  assert.equal(output.problems[0]!.best.timing.candidate_ms.median, 0.25);
});

test("with several problems, --dir DIR/<problem stem>/ holds that problem's replies; the others share DIR", async () => {
  const replies = path.join(folder, 'replies');
  await mkdir(path.join(replies, '02_gelu'), { recursive: true });
  await writeFile(path.join(replies, '1.py'), replyFile('correct 0.5'));
  await writeFile(path.join(replies, '2.py'), replyFile('incorrect'));
  await writeFile(path.join(replies, '02_gelu', '1.py'), replyFile('correct 0.125'));
  const cli = harness({ realModel: true });
  await cli.run('level1', '--provider', 'files', '--dir', replies, '--backend', 'cpu', '--max-candidates', '5', '--json');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  const runId = (JSON.parse(cli.stdout[0]!) as { run_id: string }).run_id;
  assert.deepEqual(await storedCandidates(runId), [
    { problem: '01_relu', marker: 'correct 0.5' },
    { problem: '01_relu', marker: 'incorrect' },
    { problem: '02_gelu', marker: 'correct 0.125' },
  ]);

  await rm(path.join(replies, '1.py'));
  await rm(path.join(replies, '2.py'));
  const missing = harness({ realModel: true });
  await missing.run('level1', '--provider', 'files', '--dir', replies, '--backend', 'cpu');
  assert.equal(missing.exitCode, 2);
  assert.match(
    missing.stderr.join(''),
    /no replies for 01_relu: .*replies has no subfolder named after it and no \.py, \.md or \.txt files of its own; check --dir/,
  );
});

test('the local evaluator is closed when the run ends, so no warm worker outlives the command', async () => {
  const cli = harness({ replies: [kernel('correct 0.5'), kernel('incorrect')] });
  let closed = 0;
  let evaluatedBeforeClose = 0;
  const closable = Object.assign(cli.evaluator, {
    close: async () => {
      closed += 1;
      evaluatedBeforeClose = closable.calls.length;
    },
  });
  await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1', '--json');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  assert.equal(closed, 1);
  assert.equal(evaluatedBeforeClose, 2, 'closed after the last evaluation');
});

const REAL_WORKER_ENVIRONMENT = { PATH: process.env.PATH, KFORGE_PYTHON: process.env.KFORGE_PYTHON ?? '/usr/bin/python3' };

test('--set sizes every problem: checked before the run, in every request, kept by --resume', { timeout: 300_000 }, async () => {
  const cli = harness({
    environment: REAL_WORKER_ENVIRONMENT,
    replies: [
      kernel('correct 0.5'),
      () => {
        cli.signals.emit('SIGINT');
        return kernel('correct 0.4');
      },
    ],
  });
  await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '2', '--set', 'batch_size=4', '--set', 'dim=64', '--json');
  assert.equal(cli.exitCode, 130, cli.stderr.join(''));
  const runId = (JSON.parse(cli.stdout[0]!) as { run_id: string }).run_id;
  assert.deepEqual(
    cli.evaluator.calls.map((call) => call.request.overrides),
    [{ batch_size: 4, dim: 64 }],
  );
  const store = await SqliteRunStore.open({ path: path.join(folder, '.kforge', 'kforge.db') });
  try {
    const stored = (await store.getRun(runId))?.config as { problemOverrides?: Record<string, unknown> } | undefined;
    assert.deepEqual(
      Object.keys(stored?.problemOverrides ?? {}).map((file) => path.basename(file)),
      ['01_relu.py', '02_gelu.py'],
    );
  } finally {
    await store.close();
  }
  const resumed = harness({ replies: [kernel('correct 0.3'), kernel('correct 0.2'), kernel('correct 0.1')] });
  await resumed.run('--resume', runId, '--json');
  assert.equal(resumed.exitCode, 0, resumed.stderr.join(''));
  assert.ok(resumed.evaluator.calls.length >= 2);
  for (const call of resumed.evaluator.calls) assert.deepEqual(call.request.overrides, { batch_size: 4, dim: 64 }, 'the resumed run keeps the sizes');
  const again = harness();
  await again.run('--resume', runId, '--set', 'batch_size=8');
  assert.equal(again.exitCode, 2);
  assert.match(again.stderr.join(''), /drop --set/);
});

test('--set naming a constant a problem lacks stops before the run, naming the problem and its constants', { timeout: 300_000 }, async () => {
  const cli = harness({ environment: REAL_WORKER_ENVIRONMENT, replies: [kernel('correct 0.5')] });
  await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1', '--set', 'batch=4', '--store', 'misuse.db');
  assert.equal(cli.exitCode, 2);
  assert.match(
    cli.stderr.join(''),
    /^kforge optimize: --set batch=4: none of the 2 problems has a module-level constant `batch` \(their constants: batch_size, dim\)$/m,
  );
  const scoped = harness({ environment: REAL_WORKER_ENVIRONMENT, replies: [kernel('correct 0.5')] });
  await scoped.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--max-candidates', '1', '--set', '01_relu:batch=4', '--store', 'misuse.db');
  assert.equal(scoped.exitCode, 2);
  assert.match(
    scoped.stderr.join(''),
    /^kforge optimize: --set 01_relu:batch=4: the problem 01_relu\.py has no module-level constant `batch` \(its constants: batch_size, dim\)$/m,
  );
  assert.equal(cli.evaluator.calls.length, 0, 'nothing was evaluated');
  const malformed = harness();
  await malformed.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--set', 'batch_size');
  assert.equal(malformed.exitCode, 2);
  assert.match(malformed.stderr.join(''), /expected `--set` to be NAME=VALUE/);
  const remote = harness();
  await remote.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--fit', '--redis', 'redis://127.0.0.1:1');
  assert.equal(remote.exitCode, 2);
  assert.match(remote.stderr.join(''), /`--fit` sizes each problem for this machine's device, but with `--redis`/);
});

test('--dry-run prints the problems, their sizes, estimated memory and audit findings; no model call, no store', async () => {
  let modelCreated = false;
  const audited: string[] = [];
  const cli = harness({
    createModel: async () => {
      modelCreated = true;
      return new FakeKernelModel({ replies: [] });
    },
    auditProblem: async (file, options) => {
      audited.push(`${path.basename(file)} ${options.preset} ${options.precision}`);
      // kforge optimize has no --timeout: the audit's message must name a command that has one.
      assert.equal(options.raiseLimitHint, DRY_RUN_LIMIT_HINT);
      for (const flag of DRY_RUN_LIMIT_HINT.match(/--[a-z][a-z-]*[a-z]/g) ?? []) {
        if (flag !== '--timeout') assert.ok(optimizeFlags.has(flag), `kforge optimize takes ${flag}`);
      }
      const tensor = { shape: [256, 8192], dtype: 'float32', bytes: 256 * 8192 * 4 };
      const warning = path.basename(file) === '02_gelu.py' ? [{ level: 'warning' as const, check: 'degenerate', message: 'a trivial output passes' }] : [];
      return { problemPath: file, findings: warning, durationMs: 5, audit: { inputs: [tensor], outputs: [tensor] } as never };
    },
  });
  await cli.run('level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '3', '--dry-run', '--store', 'dry.db');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  assert.deepEqual(audited, ['01_relu.py cpu fp32', '02_gelu.py cpu fp32']);
  const text = cli.stdout.join('');
  assert.match(
    text,
    /^2 problems would run \(nothing was sent to a model or stored\)\nbackend cpu, preset cpu, fp32, tolerance kernelbench; strategy refine, model vllm:m, at most 3 candidates per problem\n/,
  );
  assert.match(text, /level1\/01_relu\.py\s+256×8192 float32\s+16\.0 MiB\s+ok\n/);
  assert.match(text, /level1\/02_gelu\.py\s+256×8192 float32\s+16\.0 MiB\s+warning: degenerate — a trivial output passes/);
  assert.match(text, /0 with errors, 1 with warnings/);
  assert.equal(modelCreated, false);
  assert.equal(cli.evaluator.calls.length, 0);
  await assert.rejects(readFile(path.join(folder, 'dry.db')), /ENOENT/);
});

test('--set over problems with different constants: each gets the names it has, or the one a PROBLEM: names', { timeout: 300_000 }, async () => {
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '09_matmul_square.py'), path.join(folder, 'level1', '09_matmul_square.py'));
  const overridesOf = async (...set: string[]): Promise<{ exitCode: number | undefined; rows: Record<string, unknown>; stderr: string }> => {
    const cli = harness({
      environment: REAL_WORKER_ENVIRONMENT,
      auditProblem: async (file) => ({ problemPath: file, findings: [], durationMs: 1, audit: { inputs: [], outputs: [] } as never }),
    });
    await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--dry-run', '--json', ...set.flatMap((value) => ['--set', value]));
    const output = cli.stdout.length > 0 ? (JSON.parse(cli.stdout.join('')) as { problems: Array<{ problem: string; overrides: unknown }> }) : { problems: [] };
    return {
      exitCode: cli.exitCode,
      rows: Object.fromEntries(output.problems.map((row) => [path.basename(row.problem), row.overrides])),
      stderr: cli.stderr.join(''),
    };
  };
  const mixed = await overridesOf('batch_size=4', 'n=64', '02_gelu:dim=32');
  assert.equal(mixed.exitCode, 0, mixed.stderr);
  assert.deepEqual(mixed.rows, { '01_relu.py': { batch_size: 4 }, '02_gelu.py': { batch_size: 4, dim: 32 }, '09_matmul_square.py': { n: 64 } });
  assert.match(
    mixed.stderr,
    /^kforge optimize: --set batch_size=4 left out for 09_matmul_square\.py, which has no module-level constant `batch_size` \(its constants: n\)$/m,
  );
  assert.match(
    mixed.stderr,
    /^kforge optimize: --set n=64 left out for 01_relu\.py, which has no module-level constant `n` \(its constants: batch_size, dim\)$/m,
  );
});

test('--dry-run with --filter and --limit audits the chosen problem with the real worker', { timeout: 300_000 }, async () => {
  const cli = harness({ environment: REAL_WORKER_ENVIRONMENT });
  await cli.run('level1', '--provider', 'files', '--dir', folder, '--backend', 'cpu', '--filter', 'gelu', '--limit', '1', '--dry-run', '--json');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  const output = JSON.parse(cli.stdout.join('')) as {
    dry_run: boolean;
    problems: Array<{ problem: string; inputs: Array<{ shape: number[] }>; estimated_bytes: number; findings: unknown[] }>;
  };
  assert.equal(output.dry_run, true);
  assert.deepEqual(
    output.problems.map((problem) => path.basename(problem.problem)),
    ['02_gelu.py'],
  );
  assert.ok(output.problems[0]!.inputs[0]!.shape.length > 0);
  assert.ok(output.problems[0]!.estimated_bytes > 0);
});

test('--filter that keeps nothing, and --resume with a subset flag, are misuse', async () => {
  const cli = harness();
  await cli.run('level1', '--provider', 'vllm', '--backend', 'cpu', '--filter', 'softmax');
  assert.equal(cli.exitCode, 2);
  assert.match(cli.stderr.join(''), /no problem matches --filter softmax \(of 2\)/);
  const resumed = harness();
  await resumed.run('--resume', 'r1', '--limit', '3');
  assert.equal(resumed.exitCode, 2);
  assert.match(resumed.stderr.join(''), /drop --limit/);
});

test('a problem folder is one problem named by its folder: every candidate is swept over its shapes, and the prompt shows them', async () => {
  const problem = path.join(folder, 'kbh', 'scale-shift');
  await cp(fixturePath('problem-folders', 'scale-shift'), problem, { recursive: true });
  await writeFile(path.join(problem, 'check.py'), 'import torch\nclass Model(torch.nn.Module):\n    pass\n');
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5')] });
  const cli = harness({ createModel: async () => model, environment: { KFORGE_PYTHON: TORCH_PYTHON, PATH: process.env.PATH ?? '' } });
  await cli.run('kbh', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1', '--json', '--set', 'ROWS=2');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  assert.deepEqual(
    cli.evaluator.calls.map((call) => [path.relative(folder, call.request.problemPath), call.request.overrides]),
    [
      ['kbh/scale-shift/reference.py', { ROWS: 2, COLS: 64 }],
      ['kbh/scale-shift/reference.py', { ROWS: 2, COLS: 128 }],
      ['kbh/scale-shift/reference.py', { ROWS: 2, COLS: 300 }],
    ],
    'one evaluation per shape, --set winning; check.py is no problem',
  );
  const prompt = model.calls[0]!.messages.at(-1)!.content;
  assert.match(prompt, /^Problem `scale-shift`/m);
  assert.match(prompt, /^- shape 2: rows=4, cols=300, wide=true$/m);
  assert.match(prompt, /Do not use: `torch\.addcmul`/);
  const output = JSON.parse(cli.stdout[0]!) as { problems: Array<{ problem: string; best: { verdict: string; path: string } | null }> };
  assert.equal(output.problems.length, 1);
  assert.equal(output.problems[0]!.best?.verdict, 'correct');
  assert.equal(output.problems[0]!.best?.path, path.join(folder, 'kforge-out', 'scale-shift.py'));
  const verdict = JSON.parse(await readFile(path.join(folder, 'kforge-out', 'scale-shift.verdict.json'), 'utf8')) as { shapes: unknown[] };
  assert.equal(verdict.shapes.length, 3);
  assert.ok(cli.stderr.some((line) => line.startsWith('event=candidate-evaluated problem=scale-shift')));
});

test('a problem folder that cannot be used stops the run before any model call, with the reason', async () => {
  const problem = path.join(folder, 'broken');
  await cp(fixturePath('problem-folders', 'scale-shift'), problem, { recursive: true });
  await writeFile(path.join(problem, 'shapes.py'), 'SHAPES = [{"rows": 2}, "wide"]\n');
  const model = new FakeKernelModel({ replies: [kernel('correct 0.5')] });
  const cli = harness({ createModel: async () => model, environment: { KFORGE_PYTHON: TORCH_PYTHON, PATH: process.env.PATH ?? '' } });
  await cli.run('broken', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1');
  assert.equal(cli.exitCode, 2);
  assert.equal(
    cli.stderr.join('').trim(),
    `kforge optimize: ${path.join(problem, 'shapes.py')}: SHAPES[1] is 'wide'; each shape is a non-empty dict of constants`,
  );
  assert.equal(model.calls.length, 0);
});

test('the evaluator starts its workers before the model is first asked, so they start while it answers', async () => {
  const order: string[] = [];
  class WarmedEvaluator extends FakeEvaluator {
    async warmUp(backend: string): Promise<readonly string[]> {
      order.push(`warm-up ${backend}`);
      return ['cpu'];
    }
  }
  const asked: FakeStep = () => {
    order.push('model asked');
    return kernel('correct 0.5');
  };
  const cli = harness({ replies: [asked] });
  cli.evaluator = new WarmedEvaluator();
  await cli.run('level1/01_relu.py', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1');
  assert.equal(cli.exitCode, 0, cli.stderr.join(''));
  assert.deepEqual(order, ['warm-up cpu', 'model asked']);
});

test('the final table fits the width of the output: 80 columns off a terminal, COLUMNS where it is set', async () => {
  const widest = (lines: string[]): number =>
    Math.max(
      ...lines
        .join('')
        .split('\n')
        .map((line) => line.length),
    );
  const narrow = harness({ replies: [kernel('correct 0.5'), kernel('compile_error')] });
  await narrow.run('level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1');
  assert.equal(narrow.exitCode, 0, narrow.stderr.join(''));
  assert.ok(widest(narrow.stdout) <= 80, narrow.stdout.join(''));
  assert.match(narrow.stdout.join(''), /^problem\s+verdict\s+cand/m);
  const wide = harness({ replies: [kernel('correct 0.5'), kernel('compile_error')], environment: { COLUMNS: '200' } });
  await wide.run('level1', '--provider', 'vllm', '--model', 'm', '--backend', 'cpu', '--max-candidates', '1');
  assert.match(wide.stdout.join(''), /^problem\s+best verdict\s+candidates\s+correct\s+best ms\s+vs eager\s+vs compile\s+vs best\s+tokens\s+cost\s+device s$/m);
});
