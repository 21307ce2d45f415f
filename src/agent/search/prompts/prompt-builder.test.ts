import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPOSITORY_ROOT } from '../../../../test-support/fixture-paths.js';
import { buildIdeasPrompt, buildKernelPrompt, type PromptProblem } from './prompt-builder.js';
import { describeNamedDevice, targetFromEnvironment } from './target-device.js';

const reference = readFileSync(path.join(REPOSITORY_ROOT, 'problems', 'level1', '01_relu.py'), 'utf8');

function problem(overrides: Partial<PromptProblem> = {}): PromptProblem {
  return {
    name: '01_relu',
    referenceSource: reference,
    backend: 'cpu',
    precision: 'fp32',
    target: targetFromEnvironment({ device: 'cpu', torch: '1.13.0', cuda: null, driver: null, cpu: 'AMD EPYC 7B13', threads: 2 }, 'cpu'),
    hints: [],
    ...overrides,
  };
}

test('the cpu prompt carries the reference, the cpu rules, the guard policy and the target', () => {
  const [system, user] = buildKernelPrompt({ problem: problem(), task: { kind: 'write' } });
  assert.equal(system!.role, 'system');
  assert.match(system!.content, /load_inline\(.*cpp_sources=.*functions=/);
  assert.match(system!.content, /OpenMP is allowed/);
  assert.match(system!.content, /In `forward`, no torch compute ops/);
  assert.match(system!.content, /Never modify the inputs in place/);
  assert.match(system!.content, /fresh random inputs/);
  assert.match(system!.content, /exactly one fenced code block/);
  assert.doesNotMatch(system!.content, /cuda_sources/);
  assert.ok(user!.content.includes(reference.trimEnd()), 'the whole reference source');
  assert.match(user!.content, /Device: AMD EPYC 7B13 \(cpu backend\)/);
  assert.match(user!.content, /Hardware threads: 2/);
});

test('a GPU prompt names the device, its capability, SM count, bandwidth and measured ceilings', () => {
  const target = targetFromEnvironment(
    { device: 'NVIDIA H200', torch: '2.11.0', cuda: '13.0', driver: '580', capability: [9, 0], sm_count: 132, l2_bytes: 52428800 },
    'cuda',
  );
  const [system, user] = buildKernelPrompt({ problem: problem({ backend: 'cuda', target }), task: { kind: 'write' } });
  assert.match(system!.content, /cuda_sources/);
  assert.match(system!.content, /__hadd/);
  assert.match(user!.content, /Device: NVIDIA H200 \(cuda backend\)/);
  assert.match(user!.content, /Compute capability: 9\.0/);
  assert.match(user!.content, /SM count: 132/);
  assert.match(user!.content, /L2 cache: 50 MiB/);
  assert.match(user!.content, /4800 GB\/s datasheet, 4300 GB\/s measured/);
  assert.match(user!.content, /769 TFLOP\/s/);
  const [triton] = buildKernelPrompt({
    problem: problem({ backend: 'triton', target: describeNamedDevice('NVIDIA H100', 'triton') }),
    task: { kind: 'write' },
  });
  assert.match(triton!.content, /@triton\.jit/);
});

test('a refine prompt shows the parent, its feedback and the history; hints are passed on', () => {
  const [, user] = buildKernelPrompt({
    problem: problem({ hints: ['Rows are contiguous: vectorise the inner loop.'] }),
    task: { kind: 'refine', goal: 'fix', parent: { id: 7, source: 'class ModelNew: pass', feedback: 'Verdict: compile_error' } },
    history: ['#6 (round 0) correct, 1 ms, 1.00x vs eager', '#7 (round 1, from #6) compile_error'],
  });
  assert.match(user!.content, /Your candidate #7:\n```python\nclass ModelNew: pass\n```\nWhat the evaluator found:\nVerdict: compile_error/);
  assert.match(user!.content, /Attempts so far:\n- #6 \(round 0\) correct/);
  assert.match(user!.content, /Notes from the engineer overseeing this search:\n- Rows are contiguous/);
});

test('the ideas prompt lists tried ideas and the bank and asks for JSON, not code', () => {
  const [system, user] = buildIdeasPrompt({
    problem: problem(),
    count: 3,
    triedIdeas: ['round 0, "omp-rows": parallelise rows — best 1.80x vs eager'],
    bank: [{ id: 3, source: 'class ModelNew: pass', feedback: 'Verdict: correct' }],
  });
  assert.doesNotMatch(system!.content, /exactly one fenced code block/);
  assert.match(user!.content, /Ideas already tried and how they did:\n- round 0, "omp-rows"/);
  assert.match(user!.content, /A good earlier kernel \(#3\)/);
  assert.match(user!.content, /Propose 3 distinct optimisation ideas/);
  assert.match(user!.content, /JSON array/);
});

test("a problem folder's prompt lists its shapes, its forbidden names and its declared tolerance", () => {
  const folder = {
    shapes: [
      { M: 4096, N: 4096, K: 4127 },
      { M: 32, N: 8192, K: 8192 },
    ],
    forbidden: ['torch._scaled_mm'],
    tolerance: { bfloat16: 0.2 },
  };
  const [, user] = buildKernelPrompt({ problem: problem({ folder }), task: { kind: 'write' } });
  assert.match(user!.content, /checked and timed at each of these 2 shapes/);
  assert.match(user!.content, /^- shape 0: M=4096, N=4096, K=4127$/m);
  assert.match(user!.content, /^- shape 1: M=32, N=8192, K=8192$/m);
  assert.match(user!.content, /Do not use: `torch\._scaled_mm`/);
  assert.match(user!.content, /Declared tolerance per output dtype: \{"bfloat16":0\.2\}/);
  const [, plain] = buildKernelPrompt({ problem: problem(), task: { kind: 'write' } });
  assert.doesNotMatch(plain!.content, /shapes|Do not use/);
});
