import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { execa } from 'execa';
import type { ExportedTurn } from '../../agent/export/exported-turn.js';
import { correct, incorrect } from '../../../test-support/seeded-store/seed-results.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { FakeKernelModel } from '../../../test-support/fake-kernel-model.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { registerExportCommand, type ExportCommandDependencies } from './export.js';
import { registerOptimizeCommand } from './optimize.js';

let folder: string;
const ids = { correctCall: 0, incorrectCall: 0, noCodeCall: 0, failedCall: 0, pendingCall: 0, root: 0, child: 0, pending: 0, idea: 0 };
const system = { role: 'system' as const, content: 'You write kernels.' };
const fenced = (marker: string): string => `Here it is.\n\`\`\`python\nclass ModelNew:\n    pass  # ${marker}\n\`\`\`\n`;

/** A store filled through the RunStore API: two problems, five model turns and a person's edit. */
async function fillStore(storePath: string): Promise<void> {
  let tick = 0;
  const store = await SqliteRunStore.open({ path: storePath, now: () => new Date(Date.UTC(2026, 2, 3, 8, 0, tick++)) });
  try {
    const relu = await store.upsertProblem({ name: '01_relu', source: 'class Model: pass  # relu\n', path: '/p/01_relu.py' });
    const gelu = await store.upsertProblem({ name: '02_gelu', source: 'class Model: pass  # gelu\n', path: '/p/02_gelu.py' });
    const run = await store.createRun({ id: 'export-demo', strategy: 'ideas', model: 'vllm:m', config: {}, problemHashes: [relu.hash, gelu.hash] });
    const base = { runId: run.id, model: 'vllm:m' };
    const user = (text: string) => [system, { role: 'user' as const, content: text }];

    const first = await store.recordModelCall({
      ...base,
      problemHash: relu.hash,
      round: 0,
      messages: user('write relu'),
      replyText: fenced('root'),
      reasoningText: 'think first',
      inputTokens: 100,
      outputTokens: 40,
    });
    const root = await store.addCandidate({
      runId: run.id,
      problemHash: relu.hash,
      round: 0,
      source: 'class ModelNew:\n    pass  # root\n',
      origin: 'model',
      modelCallId: first.id,
    });
    await store.recordEvaluation({
      candidateId: root.id,
      result: correct('cpu', { medianMs: 1, eagerMs: 4, compileMs: 2 }),
      gpuSeconds: 1,
      optionsHash: 'o',
      cacheKey: 'k1',
    });

    const idea = await store.addIdea({ runId: run.id, problemHash: relu.hash, round: 1, label: 'vectorise', text: 'use float4 loads' });
    const second = await store.recordModelCall({
      ...base,
      problemHash: relu.hash,
      round: 1,
      messages: user('refine relu'),
      replyText: fenced('child'),
      inputTokens: 120,
      outputTokens: 50,
    });
    const child = await store.addCandidate({
      runId: run.id,
      problemHash: relu.hash,
      parentId: root.id,
      round: 1,
      ideaId: idea.id,
      source: 'class ModelNew:\n    pass  # child\n',
      origin: 'model',
      modelCallId: second.id,
    });
    await store.recordEvaluation({
      candidateId: child.id,
      result: incorrect('cpu', { maxAbsError: 1, maxRelError: 1, mismatched: 3, numel: 8, message: 'max abs error 1' }),
      gpuSeconds: 1,
      optionsHash: 'o',
      cacheKey: 'k2',
    });

    const third = await store.recordModelCall({
      ...base,
      problemHash: relu.hash,
      round: 1,
      messages: user('refine relu again'),
      replyText: 'I would rather not.',
      inputTokens: 90,
      outputTokens: 5,
    });
    await store.recordEvent({
      runId: run.id,
      problemHash: relu.hash,
      type: 'reply-without-code',
      payload: { round: 1, parentCandidateId: root.id, ideaId: idea.id, modelCallId: third.id, error: 'no-code', reason: 'The reply contained no code.' },
    });

    const fourth = await store.recordModelCall({
      ...base,
      problemHash: gelu.hash,
      round: 0,
      messages: user('write gelu'),
      error: 'server error 503',
      latencyMs: 10,
    });
    await store.recordEvent({
      runId: run.id,
      problemHash: gelu.hash,
      type: 'model-call-failed',
      payload: { round: 0, parentCandidateId: null, ideaId: null, modelCallId: fourth.id, message: 'server error 503' },
    });

    const fifth = await store.recordModelCall({
      ...base,
      problemHash: gelu.hash,
      round: 0,
      messages: user('write gelu'),
      replyText: fenced('pending'),
      inputTokens: 80,
      outputTokens: 30,
    });
    const pending = await store.addCandidate({
      runId: run.id,
      problemHash: gelu.hash,
      round: 0,
      source: 'class ModelNew:\n    pass  # pending\n',
      origin: 'model',
      modelCallId: fifth.id,
    });
    await store.addCandidate({
      runId: run.id,
      problemHash: relu.hash,
      parentId: root.id,
      round: 2,
      source: 'class ModelNew:\n    pass  # edited\n',
      origin: 'human',
    });
    Object.assign(ids, {
      correctCall: first.id,
      incorrectCall: second.id,
      noCodeCall: third.id,
      failedCall: fourth.id,
      pendingCall: fifth.id,
      root: root.id,
      child: child.id,
      pending: pending.id,
      idea: idea.id,
    });
  } finally {
    await store.close();
  }
}

before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-export-cli-'));
  await fillStore(path.join(folder, 'kforge.db'));
});
after(() => rm(folder, { recursive: true, force: true }));

async function exportRun(
  args: string[],
  dependencies: ExportCommandDependencies = {},
): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  const outcome = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().name('kforge').exitOverride();
  registerExportCommand(program, {
    stdout: { write: (text: string) => (outcome.stdout += text) },
    stderr: { write: (text: string) => (outcome.stderr += text) },
    setExitCode: (code) => (outcome.exitCode = code),
    environment: {},
    cwd: folder,
    ...dependencies,
  });
  await program.parseAsync(['export', ...args], { from: 'user' });
  return outcome;
}

const lines = (text: string): ExportedTurn[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as ExportedTurn);

describe('kforge export', () => {
  it('writes one JSON line per model turn, in model-call order, with lineage, verdict, speedups and reward', async () => {
    const outcome = await exportRun(['export-demo', '--store', 'kforge.db', '--format', 'jsonl']);
    assert.equal(outcome.exitCode, 0, outcome.stderr);
    assert.equal(outcome.stderr, '');
    const turns = lines(outcome.stdout);
    assert.deepEqual(
      turns.map((turn) => turn.model_call_id),
      [ids.correctCall, ids.incorrectCall, ids.noCodeCall, ids.failedCall, ids.pendingCall],
    );
    const [root, child, noCode, failed, pending] = turns as [ExportedTurn, ExportedTurn, ExportedTurn, ExportedTurn, ExportedTurn];

    assert.equal(root.run_id, 'export-demo');
    assert.equal(root.problem?.name, '01_relu');
    assert.match(root.problem?.hash ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(root.messages, [system, { role: 'user', content: 'write relu' }]);
    assert.deepEqual(root.reply, { text: fenced('root'), reasoning: 'think first' });
    assert.deepEqual([root.model, root.tokens], ['vllm:m', { input: 100, output: 40 }]);
    assert.deepEqual(root.candidate, { id: ids.root, source: 'class ModelNew:\n    pass  # root\n' });
    assert.deepEqual([root.round, root.parent_candidate_id, root.idea, root.no_candidate_reason], [0, null, null, null]);
    assert.deepEqual([root.verdict, root.speedup], ['correct', { vs_eager: 4, vs_compile: 2, vs_best: 2 }]);
    assert.equal(root.reward, 1, 'log-speedup: log2 of 2x over the best baseline');
    assert.match(root.reward_explanation ?? '', /correct at 2x over best/);

    assert.deepEqual([child.round, child.parent_candidate_id, child.idea], [1, ids.root, { id: ids.idea, label: 'vectorise' }]);
    assert.deepEqual([child.verdict, child.speedup.vs_best, child.reward], ['incorrect', null, -1]);

    assert.equal(noCode.candidate, null);
    assert.equal(noCode.no_candidate_reason, 'The reply contained no code.');
    assert.deepEqual([noCode.round, noCode.parent_candidate_id, noCode.idea], [1, ids.root, { id: ids.idea, label: 'vectorise' }]);
    assert.deepEqual([noCode.verdict, noCode.reward], [null, -1], 'scored like an empty candidate file: invalid_input');

    assert.equal(failed.problem?.name, '02_gelu');
    assert.deepEqual([failed.reply, failed.error, failed.candidate, failed.reward], [null, 'server error 503', null, null]);
    assert.equal(failed.no_candidate_reason, 'the model call failed: server error 503');

    assert.deepEqual([pending.candidate?.id, pending.verdict, pending.reward], [ids.pending, null, null], 'not yet evaluated: nothing to score');
  });

  it('--only correct keeps only turns whose candidate is correct, and --out writes a file', async () => {
    const outcome = await exportRun(['export-demo', '--store', 'kforge.db', '--only', 'correct', '--out', 'turns.jsonl']);
    assert.equal(outcome.exitCode, 0, outcome.stderr);
    assert.equal(outcome.stdout, '');
    assert.match(outcome.stderr, /1 turn\(s\) of run export-demo written to .*turns\.jsonl/);
    const turns = lines(await readFile(path.join(folder, 'turns.jsonl'), 'utf8'));
    assert.deepEqual(
      turns.map((turn) => [turn.model_call_id, turn.verdict]),
      [[ids.correctCall, 'correct']],
    );
  });

  it('--shaping scores the turns with another shaping of the reward API', async () => {
    const tiered = lines((await exportRun(['export-demo', '--store', 'kforge.db', '--shaping', 'tiered'])).stdout);
    assert.deepEqual(
      tiered.map((turn) => turn.reward),
      [3, -1, -1, null, null],
    );
    const harsh = lines(
      (await exportRun(['export-demo', '--store', 'kforge.db', '--shaping', '{"name":"log-speedup","params":{"hi":0.5,"penalties":{"invalid_input":-3}}}']))
        .stdout,
    );
    assert.deepEqual(
      harsh.map((turn) => turn.reward),
      [0.5, -1, -3, null, null],
    );
    const bad = await exportRun(['export-demo', '--store', 'kforge.db', '--shaping', '{"name":"binary","params":{"failure":2}}']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /^kforge export: bad `--shaping` at params\.failure: `failure` \(2\) must be below the lowest reward of a correct candidate/);
    const unknown = await exportRun(['export-demo', '--store', 'kforge.db', '--shaping', 'fancy']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /bad `--shaping`: .*one of binary, tiered, log-speedup/);
  });

  it('exits 2 naming the fix for an unknown run, a missing store, a bad format and a bad --only', async () => {
    const unknown = await exportRun(['nope', '--store', 'kforge.db']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /^kforge export: no run `nope` in .*kforge\.db: `kforge runs list --store .*` shows the run ids\n$/);
    const missing = await exportRun(['export-demo', '--store', 'missing.db']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /no kforge store at .*missing\.db/);
    const format = await exportRun(['export-demo', '--store', 'kforge.db', '--format', 'csv']);
    assert.deepEqual([format.exitCode, format.stderr.trim()], [2, 'kforge export: expected `--format` to be one of jsonl, got `csv`']);
    const only = await exportRun(['export-demo', '--store', 'kforge.db', '--only', 'fast']);
    assert.deepEqual([only.exitCode, only.stderr.trim()], [2, 'kforge export: expected `--only` to be one of correct, got `fast`']);
    assert.equal(format.stdout + only.stdout + unknown.stdout, '');
  });
});

describe('kforge export after kforge optimize', () => {
  it('exports the turns a real search recorded, a reply without code included', async () => {
    await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), path.join(folder, '01_relu.py'));
    const kernel = (marker: string): string =>
      `\`\`\`python\nimport torch\n# fake-verdict: ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n\`\`\`\n`;
    const model = new FakeKernelModel({ replies: [kernel('correct 0.25'), 'No code this time.', kernel('incorrect')] });
    const io = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
    const program = new Command().exitOverride();
    registerOptimizeCommand(program, {
      createEvaluator: () => new FakeEvaluator(),
      createModel: async () => model,
      stdout: { write: (text: string) => (io.stdout += text) },
      stderr: { write: (text: string) => (io.stderr += text) },
      detectGpus: async () => [],
      stderrIsTerminal: false,
      environment: {},
      setExitCode: (code) => (io.exitCode = code),
      cwd: folder,
      signals: { on: () => process, off: () => process },
      exit: () => undefined,
    });
    await program.parseAsync([
      'node',
      'kforge',
      'optimize',
      '01_relu.py',
      '--provider',
      'vllm',
      '--backend',
      'cpu',
      '--max-candidates',
      '3',
      '--store',
      'search.db',
      '--json',
    ]);
    assert.equal(io.exitCode, 0, io.stderr);
    const runId = (JSON.parse(io.stdout) as { run_id: string }).run_id;

    const turns = lines((await exportRun([runId, '--store', 'search.db'])).stdout);
    assert.equal(turns.length, 3);
    assert.deepEqual(
      turns.map((turn) => turn.verdict),
      ['correct', null, 'incorrect'],
    );
    assert.deepEqual(
      turns.map((turn) => turn.problem?.name),
      ['01_relu', '01_relu', '01_relu'],
    );
    assert.deepEqual([turns[0]!.messages[0]?.role, turns[0]!.messages.at(-1)?.role], ['system', 'user']);
    assert.match(turns[1]!.no_candidate_reason ?? '', /The reply contained no code/);
    assert.equal(turns[1]!.reply?.text, 'No code this time.');
    assert.equal(turns[2]!.parent_candidate_id, turns[0]!.candidate?.id, 'refine builds on the correct root');
    assert.equal(turns[0]!.reward, 2, 'log-speedup: 4x over eager (the only baseline timed on torch 1.13)');
    assert.deepEqual(
      lines((await exportRun([runId, '--store', 'search.db', '--only', 'correct'])).stdout).map((turn) => turn.model_call_id),
      [turns[0]!.model_call_id],
    );
  });
});

describe('kforge export: rough edges', () => {
  it('a replay that ran out of replies adds no turn (no model was asked, so there is nothing to reward)', async () => {
    for (const name of ['01_relu.py', '02_gelu.py']) await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', name), path.join(folder, name));
    await mkdir(path.join(folder, 'replies'), { recursive: true });
    await writeFile(path.join(folder, 'replies', '1.py'), 'import torch\n# fake-verdict: correct 0.5\nclass ModelNew(torch.nn.Module):\n    pass\n');
    const io = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
    const program = new Command().exitOverride();
    registerOptimizeCommand(program, {
      createEvaluator: () => new FakeEvaluator(),
      stdout: { write: (text: string) => (io.stdout += text) },
      stderr: { write: (text: string) => (io.stderr += text) },
      detectGpus: async () => [],
      stderrIsTerminal: false,
      environment: {},
      setExitCode: (code) => (io.exitCode = code),
      cwd: folder,
      signals: { on: () => process, off: () => process },
      exit: () => undefined,
    });
    await program.parseAsync([
      'node',
      'kforge',
      'optimize',
      '01_relu.py',
      '02_gelu.py',
      '--provider',
      'files',
      '--dir',
      'replies',
      '--backend',
      'cpu',
      '--max-candidates',
      '2',
      '--store',
      'replay.db',
      '--json',
    ]);
    assert.equal(io.exitCode, 0, io.stderr);
    assert.match(io.stderr, /event=model-exhausted problem=/, 'the replay ran out while the search went on');
    const runId = (JSON.parse(io.stdout) as { run_id: string }).run_id;
    const turns = lines((await exportRun([runId, '--store', 'replay.db'])).stdout);
    assert.deepEqual(
      turns.map((turn) => [turn.problem?.name, turn.verdict, turn.reward === null]),
      [['01_relu', 'correct', false]],
    );
  });

  it('`kforge export RUN | head -2` ends quietly when head stops reading', async () => {
    // Turns larger than a pipe's buffer, so kforge is still writing when head has gone.
    const store = await SqliteRunStore.open({ path: path.join(folder, 'big.db') });
    try {
      const problem = await store.upsertProblem({ name: '01_relu', source: 'class Model: pass\n', path: '/p/01_relu.py' });
      const run = await store.createRun({ id: 'big', strategy: 'refine', model: 'vllm:m', config: {}, problemHashes: [problem.hash] });
      for (let turn = 0; turn < 20; turn += 1) {
        await store.recordModelCall({
          runId: run.id,
          model: 'vllm:m',
          problemHash: problem.hash,
          round: turn,
          messages: [{ role: 'user', content: 'x'.repeat(64 * 1024) }],
          replyText: 'No code.',
          inputTokens: 1,
          outputTokens: 1,
        });
      }
    } finally {
      await store.close();
    }
    const cli = path.join(REPOSITORY_ROOT, 'bin', 'kforge.js');
    const result = await execa('bash', ['-c', `node ${JSON.stringify(cli)} export big --store big.db | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}`], {
      cwd: folder,
      reject: false,
    });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
  });
});
