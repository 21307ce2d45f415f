import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { evaluationResultSchema } from '../../core/verdict.js';
import type { EvaluateOptions, EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import type { BudgetHolder } from '../../eval/pipeline-events.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { FakeEvaluator, judgeByMarker } from '../../../test-support/fake-evaluator.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON } from '../../../test-support/torch-python.js';
import { deviceWaitWriter } from './eval-batch.js';
import { registerEvalCommand } from './eval.js';
import { TOO_SLOW_HINT, TOO_SLOW_MESSAGE, tooSlowFault } from '../../../test-support/too-slow-fault.js';

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');

async function runEval(evaluator: Evaluator, cwd: string, ...argv: string[]) {
  const seen = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().exitOverride();
  registerEvalCommand(program, {
    createEvaluator: () => evaluator,
    stdout: { write: (text: string) => void (seen.stdout += text) },
    stderr: { write: (text: string) => void (seen.stderr += text) },
    setExitCode: (code) => void (seen.exitCode = code),
    environment: {},
    cwd,
    color: false,
  });
  await program.parseAsync(['node', 'kforge', 'eval', ...argv, '--backend', 'cpu']);
  return seen;
}

async function folderWith(files: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-batch-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(folder, name)), { recursive: true });
    await writeFile(path.join(folder, name), text);
  }
  return folder;
}

const candidate = (marker: string): string =>
  `import torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n`;

const lines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('kforge eval with several candidates', () => {
  it('prints one result line per candidate with --json, a summary on stderr, and exits 1 when some are not correct', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('incorrect'), 'c.py': candidate('correct 0.2') });
    try {
      const evaluator = new FakeEvaluator();
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', 'c.py', '--json', '--set', 'batch_size=8');
      assert.equal(seen.exitCode, 1, seen.stderr);
      const results = lines(seen.stdout).map((line) => evaluationResultSchema.parse(line));
      assert.deepEqual(results.map((result) => [path.basename(result.candidate), result.verdict]).sort(), [
        ['a.py', 'correct'],
        ['b.py', 'incorrect'],
        ['c.py', 'correct'],
      ]);
      assert.match(seen.stderr, /3 candidates: 2 correct, 1 incorrect; .* candidates per hour/);
      assert.deepEqual(
        evaluator.calls.map((call) => call.request.overrides),
        [{ batch_size: 8 }, { batch_size: 8 }, { batch_size: 8 }],
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('says on stderr as each candidate finishes building, before any verdict', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.1') });
    class BuildingEvaluator extends FakeEvaluator {
      override async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}) {
        const cached = path.basename(request.candidatePath) === 'b.py';
        options.onPipelineEvent?.({ kind: 'build-finished', device: 'cpu', buildKey: null, built: true, cacheHit: cached, durationMs: cached ? 0 : 61_900 });
        return super.evaluate(request, options);
      }
    }
    try {
      const seen = await runEval(new BuildingEvaluator(), folder, PROBLEM, 'a.py', 'b.py', '--json');
      assert.equal(seen.exitCode, 0, seen.stderr);
      assert.match(seen.stderr, /a\.py built in 61\.9 s \([12] of 2 builds done\)/);
      assert.match(seen.stderr, /b\.py built \(cached\) \([12] of 2 builds done\)/);
      assert.equal(lines(seen.stdout).length, 2, 'stdout keeps one JSON line per candidate');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('exits 0 when every candidate is correct, taking PROBLEM:CANDIDATE pairs', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.1') });
    try {
      const seen = await runEval(new FakeEvaluator(), folder, `${PROBLEM}:a.py`, `${PROBLEM}:b.py`, '--json');
      assert.equal(seen.exitCode, 0, seen.stderr);
      assert.equal(lines(seen.stdout).length, 2);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('reports a candidate the machine could not evaluate as an error line without a verdict, tries it again, and exits 2', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.3') });
    try {
      const evaluator = new FakeEvaluator({
        judge: (source, request: EvaluationRequest) => {
          if (request.candidatePath.endsWith('b.py')) {
            throw new MachineFaultError('the reference process ran out of device memory; no verdict', {
              resource: 'device-memory',
              role: 'reference',
              hint: 'evaluate fewer candidates at once',
              retryAfterSeconds: 0,
            });
          }
          return judgeByMarker(source, request);
        },
      });
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', '--json', '--retries', '1');
      assert.equal(seen.exitCode, 2, seen.stderr);
      const byCandidate = new Map(lines(seen.stdout).map((line) => [path.basename(String(line.candidate)), line]));
      assert.equal(byCandidate.get('a.py')!.verdict, 'correct');
      const failed = byCandidate.get('b.py')!;
      assert.equal(failed.verdict, undefined, "no verdict for the machine's fault");
      assert.deepEqual(failed.error, {
        kind: 'machine_fault',
        resource: 'device-memory',
        message: 'the reference process ran out of device memory; no verdict',
        hint: 'evaluate fewer candidates at once',
        attempts: 2,
      });
      assert.equal(evaluator.calls.filter((call) => call.request.candidatePath.endsWith('b.py')).length, 2);
      assert.match(
        seen.stderr,
        /b\.py: the reference process ran out of device memory; no verdict; evaluate fewer candidates at once; trying again \(1 of 1\)/,
      );
      assert.match(seen.stderr, /1 not evaluated \(no verdict/);
      const human = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', '--retries', '0');
      assert.equal(human.exitCode, 2, human.stderr);
      assert.match(human.stdout, /not evaluated +\S+ +b\.py — the reference process ran out of device memory; no verdict; evaluate fewer candidates at once\n/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('does not try again a reference too slow for its stage at these sizes: the pace was measured, and only other sizes help', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.3') });
    try {
      const evaluator = new FakeEvaluator({
        judge: (source, request: EvaluationRequest) => {
          if (!request.candidatePath.endsWith('a.py')) return judgeByMarker(source, request);
          throw tooSlowFault();
        },
      });
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', '--json');
      assert.equal(seen.exitCode, 2, seen.stderr);
      assert.equal(
        evaluator.calls.filter((call) => call.request.candidatePath.endsWith('a.py')).length,
        1,
        'tried once, despite the default of two more tries',
      );
      assert.doesNotMatch(seen.stderr, /trying again/);
      const failed = lines(seen.stdout).find((line) => String(line.candidate).endsWith('a.py'))!;
      assert.deepEqual(failed.error, {
        kind: 'machine_fault',
        resource: 'time',
        message: TOO_SLOW_MESSAGE,
        hint: TOO_SLOW_HINT,
        attempts: 1,
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('exits 3 when kforge itself failed on a candidate', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.3') });
    try {
      const evaluator = new FakeEvaluator({
        judge: (source, request: EvaluationRequest) => {
          if (request.candidatePath.endsWith('a.py'))
            throw new WorkerFaultError('the reference worker exited with status 1', { role: 'reference', stage: 'judge', stderr: 'Traceback' });
          return judgeByMarker(source, request);
        },
      });
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', '--json', '--retries', '0');
      assert.equal(seen.exitCode, 3, seen.stderr);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("pairs a KernelBench run folder's kernels with the problems of a KernelBench checkout", async () => {
    const problem =
      'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\ndef get_inputs():\n    return [torch.ones(2)]\ndef get_init_inputs():\n    return []\n';
    const folder = await folderWith({
      'KernelBench/KernelBench/level1/19_ReLU.py': problem,
      'KernelBench/KernelBench/level1/1_Square.py': problem,
      'KernelBench/KernelBench/level2/19_Other.py': problem,
      'runs/r1/level_1_problem_19_sample_0_kernel.py': candidate('correct 0.5'),
      'runs/r1/level_2_problem_19_sample_1_kernel.py': candidate('incorrect'),
      'runs/r1/notes.txt': 'not a kernel',
    });
    try {
      const evaluator = new FakeEvaluator();
      const seen = await runEval(evaluator, folder, 'runs/r1', '--kernelbench', 'KernelBench', '--json');
      assert.equal(seen.exitCode, 1, seen.stderr);
      const pairs = evaluator.calls.map((call) => [path.relative(folder, call.request.problemPath), path.basename(call.request.candidatePath)]).sort();
      assert.deepEqual(pairs, [
        ['KernelBench/KernelBench/level1/19_ReLU.py', 'level_1_problem_19_sample_0_kernel.py'],
        ['KernelBench/KernelBench/level2/19_Other.py', 'level_2_problem_19_sample_1_kernel.py'],
      ]);
      const missing = await runEval(new FakeEvaluator(), folder, 'runs/r1', '--json');
      assert.equal(missing.exitCode, 2);
      assert.match(missing.stderr, /say where its problems are with --kernelbench PATH/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('gives every candidate of a batch the same request a single candidate gets, every flag included', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.5') });
    try {
      const flags = ['--cross-check', '--timing-budget', '12', '--warmup-ms', '250', '--perf-trials', '40', '--guard-policy', 'own-kernels', '--wait', '90s'];
      const single = new FakeEvaluator();
      assert.equal((await runEval(single, folder, PROBLEM, 'a.py', '--json', ...flags)).exitCode, 0);
      const batch = new FakeEvaluator();
      assert.equal((await runEval(batch, folder, PROBLEM, 'a.py', 'b.py', '--json', ...flags)).exitCode, 0);
      const request = single.calls[0]!.request;
      assert.equal(request.crossCheck, true);
      assert.equal(request.timingBudgetMs, 12_000);
      assert.equal(request.warmupMs, 250);
      assert.equal(request.deviceWaitMs, 90_000);
      assert.equal(batch.calls.length, 2);
      for (const call of batch.calls) {
        assert.deepEqual({ ...call.request, candidatePath: request.candidatePath }, request, 'a batch drops no flag');
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('with --resume, keeps each result in a file and evaluates again only what it holds no verdict for', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.3'), 'c.py': candidate('incorrect') });
    try {
      let machineDown = true;
      const judge = (source: string, request: EvaluationRequest) => {
        if (machineDown && request.candidatePath.endsWith('b.py'))
          throw new MachineFaultError('the reference process ran out of device memory; no verdict', {
            resource: 'device-memory',
            role: 'reference',
            hint: 'wait',
          });
        return judgeByMarker(source, request);
      };
      const first = new FakeEvaluator({ judge });
      const before = await runEval(first, folder, PROBLEM, 'a.py', 'b.py', 'c.py', '--json', '--retries', '0', '--resume', 'results.jsonl');
      assert.equal(before.exitCode, 2, before.stderr);
      const kept = (await readFile(path.join(folder, 'results.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(kept.length, 3, 'every finished candidate has its line, the one without a verdict too');
      assert.ok(kept.every((line) => typeof line.resume_key === 'string' && (line.resume_key as string).length === 64));

      machineDown = false;
      const second = new FakeEvaluator({ judge });
      const after = await runEval(second, folder, PROBLEM, 'a.py', 'b.py', 'c.py', '--json', '--retries', '0', '--resume', 'results.jsonl');
      assert.equal(after.exitCode, 1, after.stderr);
      assert.deepEqual(
        second.calls.map((call) => path.basename(call.request.candidatePath)),
        ['b.py'],
        'only the candidate without a verdict is evaluated again',
      );
      assert.deepEqual(
        lines(after.stdout)
          .map((line) => [path.basename(String(line.candidate)), line.verdict])
          .sort(),
        [
          ['a.py', 'correct'],
          ['b.py', 'correct'],
          ['c.py', 'incorrect'],
        ],
      );
      assert.match(after.stderr, /3 candidates: 2 correct, 1 incorrect; 2 kept from an earlier run \(--resume\), 1 evaluated in this one/);
      const again = new FakeEvaluator({ judge });
      const nothingLeft = await runEval(again, folder, PROBLEM, 'a.py', 'b.py', 'c.py', '--json', '--resume', 'results.jsonl');
      assert.equal(again.calls.length, 0);
      assert.equal(lines(nothingLeft.stdout).length, 3);
      assert.match(
        nothingLeft.stderr,
        /3 kept from an earlier run \(--resume\), 0 evaluated in this one; [^\n]*held [^,\n]*\n$/,
        'no rate of candidates per hour for none evaluated',
      );

      // What was evaluated changed: the candidate's bytes, or a setting that can change its figures.
      await writeFile(path.join(folder, 'a.py'), candidate('correct 0.25'));
      const edited = new FakeEvaluator({ judge });
      await runEval(edited, folder, PROBLEM, 'a.py', 'b.py', 'c.py', '--json', '--resume', 'results.jsonl');
      assert.deepEqual(
        edited.calls.map((call) => path.basename(call.request.candidatePath)),
        ['a.py'],
      );
      const otherSettings = new FakeEvaluator({ judge });
      await runEval(otherSettings, folder, PROBLEM, 'a.py', 'b.py', '--json', '--perf-trials', '7', '--resume', 'results.jsonl');
      assert.equal(otherSettings.calls.length, 2, 'other timing settings: nothing is taken');
      const longerWait = new FakeEvaluator({ judge });
      await runEval(longerWait, folder, PROBLEM, 'a.py', 'b.py', '--json', '--wait', '1h', '--resume', 'results.jsonl');
      assert.equal(longerWait.calls.length, 0, 'how long to wait for the device changes no verdict');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('with --resume, reads past a line cut short by a killed run, and takes a single candidate as a batch of one', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.3') });
    try {
      const first = await runEval(new FakeEvaluator(), folder, PROBLEM, 'a.py', '--json', '--resume', 'results.jsonl');
      assert.equal(first.exitCode, 0, first.stderr);
      assert.equal(lines(first.stdout).length, 1, 'one JSON line, as the single form prints one object');
      await appendFile(path.join(folder, 'results.jsonl'), '{"resume_key":"abc","verdict":"corr');
      const evaluator = new FakeEvaluator();
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', 'b.py', '--json', '--resume', 'results.jsonl');
      assert.equal(seen.exitCode, 0, seen.stderr);
      assert.match(seen.stderr, /1 line\(s\) of results\.jsonl could not be read/);
      assert.deepEqual(
        evaluator.calls.map((call) => path.basename(call.request.candidatePath)),
        ['b.py'],
      );
      const text = await readFile(path.join(folder, 'results.jsonl'), 'utf8');
      const whole = text
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{"resume_key":"') && line.endsWith('}'));
      assert.equal(whole.length, 2, 'the new line starts on a line of its own, after the cut one');
      const folderAsFile = await runEval(new FakeEvaluator(), folder, PROBLEM, 'a.py', 'b.py', '--resume', '.');
      assert.equal(folderAsFile.exitCode, 2);
      assert.match(folderAsFile.stderr, /--resume: `.*` is a folder/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('keeps the single-candidate form: one JSON object, and --set reaches the request', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5') });
    try {
      const evaluator = new FakeEvaluator();
      const seen = await runEval(evaluator, folder, PROBLEM, 'a.py', '--json', '--set', 'batch_size=4', '--set', 'dim=2');
      assert.equal(seen.exitCode, 0, seen.stderr);
      evaluationResultSchema.parse(JSON.parse(seen.stdout));
      assert.deepEqual(evaluator.calls[0]!.request.overrides, { batch_size: 4, dim: 2 });
      const bad = await runEval(new FakeEvaluator(), folder, PROBLEM, 'a.py', '--set', 'batch_size');
      assert.equal(bad.exitCode, 2);
      assert.match(bad.stderr, /expected `--set` to be NAME=VALUE/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('the line a waiting evaluation writes on stderr', () => {
  const since = '2026-12-05T00:00:00Z';
  const write = (event: Parameters<ReturnType<typeof deviceWaitWriter>>[0]): string => {
    let text = '';
    deviceWaitWriter({ write: (line: string) => void (text += line) }, 'kforge eval')(event);
    return text;
  };
  const CONTEXT = 768 * 1024 ** 2;
  /** The line of a wait for a context's room under a cap of `cap` contexts, with 60 of 80 GiB free. */
  const contextWaitLine = (holders: BudgetHolder[], cap: number): string =>
    write({
      kind: 'device-waiting',
      device: 'cuda:0',
      reason: 'memory',
      neededBytes: CONTEXT,
      freeBytes: 60 * 1024 ** 3,
      capacityBytes: 80 * 1024 ** 3,
      holders,
      contextCapBytes: cap * CONTEXT,
    });

  it('names who holds the memory it waits for', () => {
    const line = write({
      kind: 'device-waiting',
      device: 'cuda:0',
      reason: 'memory',
      neededBytes: 40 * 1024 ** 3,
      freeBytes: 30 * 1024 ** 3,
      capacityBytes: 80 * 1024 ** 3,
      holders: [{ pid: 41, label: 'pid 41: 19_ReLU.py relu.py', bytes: 50 * 1024 ** 3, since, kind: 'evaluation' }],
    });
    assert.equal(
      line,
      "kforge eval: waiting for 40.00 GiB of cuda:0's memory: 30.00 GiB of 80.00 GiB free, held by pid 41 (pid 41: 19_ReLU.py relu.py, 50.00 GiB)\n",
    );
  });

  it("names a process's many contexts once, with their count and bytes (a batch's waiting workers hold a dozen or more)", () => {
    const line = contextWaitLine(
      [
        ...Array.from({ length: 17 }, () => ({ pid: 619, label: "pid 619: candidate worker's context", bytes: CONTEXT, since, kind: 'context' as const })),
        { pid: 619, label: 'pid 619: 19_ReLU.py relu.py', bytes: 43.75 * 1024 ** 3, since, kind: 'evaluation' },
        { pid: 700, label: "pid 700: reference worker's context", bytes: CONTEXT, since, kind: 'context' },
      ],
      18,
    );
    assert.match(
      line,
      /held by pid 619 \(17 workers' contexts, 12\.75 GiB\), pid 619 \(pid 619: 19_ReLU\.py relu\.py, 43\.75 GiB\), pid 700 \(pid 700: reference worker's context, 0\.75 GiB\)\n$/,
    );
  });

  it("says when a worker waits for room for its CUDA context under the contexts' cap, and whose contexts hold it", () => {
    const line = contextWaitLine(
      [
        { pid: 41, label: "pid 41: candidate worker's context", bytes: CONTEXT, since, kind: 'context' },
        { pid: 42, label: "pid 42: candidate worker's context", bytes: CONTEXT, since, kind: 'context' },
        { pid: 41, label: 'pid 41: 19_ReLU.py relu.py', bytes: 18 * 1024 ** 3, since, kind: 'evaluation' },
      ],
      2,
    );
    assert.match(
      line,
      /^kforge eval: waiting for room for a worker's CUDA context on cuda:0: contexts outside a lease hold 1\.50 GiB of their 1\.50 GiB \(KFORGE_CONTEXT_BUDGET_BYTES\)/,
    );
    assert.match(line, /held by pid 41 \(pid 41: candidate worker's context, 0\.75 GiB\), pid 42 /);
  });
});

describe('kforge eval with a problem folder in a batch', () => {
  const FOLDER = fixturePath('problem-folders', 'scale-shift');
  const ENVIRONMENT = { KFORGE_PYTHON: TORCH_PYTHON, PATH: process.env.PATH ?? '' };

  async function runWith(evaluator: Evaluator, cwd: string, ...argv: string[]) {
    const seen = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
    const program = new Command().exitOverride();
    registerEvalCommand(program, {
      createEvaluator: () => evaluator,
      stdout: { write: (text: string) => void (seen.stdout += text) },
      stderr: { write: (text: string) => void (seen.stderr += text) },
      setExitCode: (code) => void (seen.exitCode = code),
      environment: ENVIRONMENT,
      cwd,
      color: false,
    });
    await program.parseAsync(['node', 'kforge', 'eval', ...argv, '--backend', 'cpu']);
    return seen;
  }

  it('FOLDER CAND…, FOLDER:CAND pairs and pairs.txt lines: each candidate swept over the shapes, its first build counted once', async () => {
    const folder = await folderWith({
      'a.py': candidate('correct 0.5'),
      'b.py': candidate('correct 0.25'),
      'pairs/pairs.txt': `${FOLDER}:../a.py\n`,
    });
    class BuildingEvaluator extends FakeEvaluator {
      override async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}) {
        options.onPipelineEvent?.({ kind: 'build-finished', device: 'cpu', buildKey: null, built: true, cacheHit: false, durationMs: 1000 });
        return super.evaluate(request, options);
      }
    }
    try {
      const evaluator = new BuildingEvaluator();
      const seen = await runWith(evaluator, folder, FOLDER, 'a.py', 'b.py', '--json');
      assert.equal(seen.exitCode, 0, seen.stderr);
      const results = lines(seen.stdout).map((line) => evaluationResultSchema.parse(line));
      assert.deepEqual(
        results.map((result) => [result.problem, result.shapes?.length]),
        [
          [path.join(FOLDER, 'reference.py'), 3],
          [path.join(FOLDER, 'reference.py'), 3],
        ],
      );
      assert.equal(evaluator.calls.length, 6);
      assert.match(seen.stderr, /\(2 of 2 builds done\)/);
      assert.doesNotMatch(seen.stderr, /\(3 of 2 builds done\)/, "a sweep's later shapes reuse its build");

      const paired = await runWith(new FakeEvaluator(), folder, `${FOLDER}:a.py`, `${path.join(FOLDER, 'reference.py')}:b.py`);
      assert.equal(paired.exitCode, 0, paired.stderr);
      assert.match(paired.stdout, /^correct +[\d.]+x vs best {2}scale-shift\/reference\.py {2}a\.py$/m);
      assert.match(paired.stdout, /^correct +[\d.]+x vs best {2}scale-shift\/reference\.py {2}b\.py$/m);

      const listed = await runWith(new FakeEvaluator(), folder, 'pairs', '--json');
      assert.equal(listed.exitCode, 0, listed.stderr);
      assert.equal(evaluationResultSchema.parse(lines(listed.stdout)[0]).shapes?.length, 3);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('--shape past the last shape, or with a single-file problem, is a usage error before anything runs', async () => {
    const folder = await folderWith({ 'a.py': candidate('correct 0.5'), 'b.py': candidate('correct 0.25') });
    try {
      const evaluator = new FakeEvaluator();
      const outside = await runWith(evaluator, folder, FOLDER, 'a.py', 'b.py', '--shape', '3');
      assert.equal(outside.exitCode, 2);
      assert.equal(outside.stderr.trim(), `kforge eval: --shape 3: the problem folder ${FOLDER} has 3 shapes (0 to 2)`);
      const single = await runWith(evaluator, folder, `${PROBLEM}:a.py`, `${FOLDER}:b.py`, '--shape', '0');
      assert.equal(single.exitCode, 2);
      assert.match(single.stderr, /--shape picks a shape of a problem folder \(reference\.py with shapes\.py\); .*problem\.py is a single-file problem/);
      assert.equal(evaluator.calls.length, 0);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
