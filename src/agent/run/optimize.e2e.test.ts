/**
 * End-to-end runs of `kforge optimize` on the cpu backend: the real PythonEvaluator (real C++
 * builds, about a minute each on a small machine, three in all) and a real OpenAI-compatible HTTP
 * server on loopback with scripted replies. Needs Python with PyTorch (`KFORGE_PYTHON`, default
 * `python3`); skipped with the reason when it is missing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { FileBaselineCache } from '../../eval/cache/file-baseline-cache.js';
import { PythonEvaluator } from '../../eval/run/python-evaluator.js';
import { createKernelModel } from '../../llm/providers/providers.js';
import { SqliteRunStore } from '../../store/sqlite/sqlite-run-store.js';
import { REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { startOpenAiCompatibleServer } from '../../../test-support/openai-compatible-server.js';
import { waitForDeath } from '../../../test-support/process-liveness.js';
import { startOptimizeRun } from './optimize-run.js';
import { torchUnavailable } from '../../../test-support/torch-python.js';

const skip = torchUnavailable(TEST_PYTHON);

const fence = (source: string): string => `Here is the kernel.\n\n\`\`\`python\n${source}\`\`\`\n`;

/** A ReLU in C++ through load_inline; `flags` decide how fast it is. */
function reluKernel(name: string, flags: string[], parallel: boolean): string {
  return `import torch
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const float* in_ptr = input.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    const int64_t n = input.numel();
${parallel ? '#pragma omp parallel for schedule(static)\n' : ''}    for (int64_t i = 0; i < n; ++i) out_ptr[i] = in_ptr[i] < 0.0f ? 0.0f : in_ptr[i];
    return out;
}
"""

_extension = load_inline(
    name="${name}",
    cpp_sources=_SOURCE,
    functions=["relu_forward"],
    extra_cflags=${JSON.stringify(flags)},
    extra_ldflags=${JSON.stringify(parallel ? ['-fopenmp'] : [])},
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _extension.relu_forward(x)
`;
}

/** A candidate with no build at all: it fails in forward (or sleeps at import first), cheaply. */
function raisingCandidate(tag: string, sleepSeconds = 0): string {
  return `import time

import torch

time.sleep(${sleepSeconds})


class ModelNew(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("${tag}: not written yet")
`;
}

async function scratchFolder(): Promise<{ folder: string; problem: string }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-e2e-'));
  const problem = path.join(folder, '01_relu.py');
  await copyFile(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), problem);
  return { folder, problem };
}

test('refine over HTTP: a build failure, a 429, its fix, a reply without code, a hang, a faster kernel', { skip, timeout: 25 * 60_000 }, async () => {
  const { folder, problem } = await scratchFolder();
  const compileError = await readFile(path.join(REPOSITORY_ROOT, 'examples', 'level1_01_relu', 'cpu_compile_error.py'), 'utf8');
  const server = await startOpenAiCompatibleServer({
    lifetimeMs: 24 * 60_000,
    script: [
      fence(compileError),
      { status: 429, retryAfterSeconds: 0, message: 'rate limited' },
      fence(reluKernel('kforge_e2e_relu_plain', ['-O0'], false)),
      'The next step would be OpenMP, but I have not written it yet.',
      'hang',
      fence(reluKernel('kforge_e2e_relu_openmp', ['-O3', '-fopenmp'], true)),
    ],
  });
  const store = await SqliteRunStore.open({ path: path.join(folder, 'kforge.db') });
  try {
    const model = await createKernelModel({ provider: 'openai-compatible', baseUrl: server.baseUrl, model: 'scripted', timeoutSeconds: 3, maxAttempts: 3 });
    const evaluator = new PythonEvaluator({
      workerDirectory: WORKER_DIRECTORY,
      python: TEST_PYTHON,
      baselineCache: new FileBaselineCache({ directory: path.join(folder, 'baselines') }),
    });
    const report = await startOptimizeRun(
      {
        version: 1,
        problems: [problem],
        strategy: 'refine',
        perProblem: { maxCandidates: 4 },
        total: {},
        evaluation: { backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench', perfTrials: 20 },
        stall: { patience: 10, policy: 'continue' },
        model: { provider: 'openai-compatible', baseUrl: server.baseUrl, model: 'scripted' },
        outDir: path.join(folder, 'out'),
        candidatesDir: path.join(folder, 'candidates'),
      },
      { store, model, evaluator },
    );

    assert.equal(server.requests.length, 6, 'the 429 and the hang were retried by the provider layer');
    const candidates = await store.listCandidates(report.runId);
    assert.deepEqual(
      candidates.map((candidate) => candidate.evaluation?.verdict),
      ['compile_error', 'correct', 'correct'],
    );
    const prompts = server.requests.map((request) => JSON.stringify(request.body));
    assert.match(prompts[2]!, /cannot convert/, "the fix saw the compiler's own error");
    assert.match(prompts[4]!, /Your last reply could not be used/);
    assert.deepEqual(
      candidates.map((candidate) => candidate.parentId),
      [null, candidates[0]!.id, candidates[1]!.id],
    );
    assert.equal((await store.listEvents(report.runId, { types: ['reply-without-code'] })).length, 1);
    const [plain, openmp] = [candidates[1]!, candidates[2]!].map((candidate) => candidate.evaluation!.candidateMedianMs!);
    const best = report.problems[0]!.best!;
    assert.equal(best.verdict, 'correct');
    assert.equal(best.result.timing?.candidate_ms.median, Math.min(plain!, openmp!));
    assert.match(await readFile(best.kernelPath, 'utf8'), /class ModelNew/);
    assert.equal(JSON.parse(await readFile(best.verdictPath, 'utf8')).verdict, 'correct');
    assert.ok(report.totals.deviceMs > 0);
  } finally {
    await store.close();
    await server.close();
    await rm(folder, { recursive: true, force: true });
  }
});

/** How to start `kforge optimize`: the compiled binary, as a user does. */
function kforgeCommand(): string[] {
  return [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js')];
}

interface KforgeChild {
  child: ReturnType<typeof spawn>;
  /** Standard error so far. */
  stderr: () => string;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function startKforge(args: string[], cwd: string): KforgeChild {
  const child = spawn(process.execPath, [...kforgeCommand(), 'optimize', ...args], {
    cwd,
    detached: true,
    env: { ...process.env, KFORGE_PYTHON: TEST_PYTHON, KFORGE_CACHE_DIR: path.join(cwd, 'cache') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, stderr: () => stderr, done };
}

test('kforge optimize killed with SIGKILL mid-evaluation resumes without losing or repeating an evaluation', { skip, timeout: 10 * 60_000 }, async () => {
  const { folder, problem } = await scratchFolder();
  const server = await startOpenAiCompatibleServer({
    lifetimeMs: 9 * 60_000,
    script: [fence(raisingCandidate('first')), fence(raisingCandidate('second', 20)), fence(raisingCandidate('third'))],
  });
  const storePath = path.join(folder, 'kforge.db');
  const args = [
    problem,
    '--provider',
    'openai-compatible',
    '--base-url',
    server.baseUrl,
    '--model',
    'scripted',
    '--backend',
    'cpu',
    '--max-candidates',
    '3',
    '--perf-trials',
    '10',
    '--store',
    storePath,
    '--json',
  ];
  try {
    const first = startKforge(args, folder);
    let runId = '';
    let firstEvaluationId = 0;
    for (let waited = 0; ; waited += 250) {
      assert.ok(waited < 5 * 60_000, `the first run never reached its second evaluation:\n${first.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const store = await SqliteRunStore.open({ path: storePath }).catch(() => null);
      if (!store) continue;
      try {
        const [run] = await store.listRuns();
        if (!run) continue;
        const candidates = await store.listCandidates(run.id);
        if (candidates.length === 2 && candidates[0]!.evaluation && !candidates[1]!.evaluation) {
          runId = run.id;
          firstEvaluationId = candidates[0]!.evaluation.id;
          break;
        }
      } finally {
        await store.close();
      }
    }
    process.kill(-first.child.pid!, 'SIGKILL');
    assert.equal(await waitForDeath(first.child.pid!, 5000), true);
    await first.done;

    const killed = await SqliteRunStore.open({ path: storePath });
    try {
      assert.equal((await killed.getRun(runId))?.status, 'running', 'a run killed with kill -9 is left running');
      assert.equal((await killed.pendingWork(runId)).length, 1);
    } finally {
      await killed.close();
    }

    const resumed = startKforge(['--resume', runId, '--store', storePath, '--json'], folder);
    const outcome = await resumed.done;
    assert.equal(outcome.code, 0, outcome.stderr);
    const output = JSON.parse(outcome.stdout) as { run_id: string; problems: Array<{ candidate_count: number; best: { verdict: string } | null }> };
    assert.equal(output.run_id, runId);
    assert.equal(output.problems[0]!.candidate_count, 3);
    assert.equal(output.problems[0]!.best?.verdict, 'runtime_error');
    assert.equal(server.requests.length, 3, 'no model call was repeated');

    const store = await SqliteRunStore.open({ path: storePath });
    try {
      const candidates = await store.listCandidates(runId);
      assert.equal(candidates.length, 3);
      assert.equal(candidates[0]!.evaluation?.id, firstEvaluationId, 'the finished evaluation was kept, not redone');
      assert.ok(candidates.every((candidate) => candidate.evaluation?.verdict === 'runtime_error'));
      assert.equal((await store.getRun(runId))?.status, 'finished');
      assert.equal((await store.listEvents(runId, { types: ['run-resumed'] })).length, 1);
    } finally {
      await store.close();
    }
  } finally {
    await server.close();
    await rm(folder, { recursive: true, force: true });
  }
});
