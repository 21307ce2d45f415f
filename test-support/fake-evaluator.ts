import { readFile } from 'node:fs/promises';
import type { EvaluationResult, ResultOfVerdict, TimingStats } from '../src/core/verdict.js';
import { deviceSlotOf, type EvaluateOptions, type Evaluation, type EvaluationRequest, type Evaluator } from '../src/eval/evaluator.js';
import { Semaphore } from '../src/eval/locks/semaphore.js';

/** A CPU environment as the worker reports it. */
export const FAKE_ENVIRONMENT = {
  device: 'cpu',
  torch: '1.13.0',
  cuda: null,
  driver: null,
  python: '3.11.2',
  cpu: 'Fake CPU @ 2.0GHz',
  threads: 2,
} as const;

/** Timing statistics around a median, in ms, with a plausible spread and interval. */
export function fakeStats(medianMs: number, n = 100): TimingStats {
  return {
    median: medianMs,
    mean: medianMs * 1.02,
    std: medianMs * 0.03,
    min: medianMs * 0.95,
    max: medianMs * 1.3,
    ci95: [medianMs * 0.98, medianMs * 1.02],
    n,
  };
}

interface ResultBase {
  problem?: string;
  candidate?: string;
}

/** The fields every result has; each builder adds its verdict (and its reasons). */
function base(parts: ResultBase): Omit<ResultOfVerdict<'invalid_input'>, 'verdict'> {
  return {
    reasons: [],
    problem: parts.problem ?? '/problems/01_relu.py',
    candidate: parts.candidate ?? '/candidates/candidate.py',
    backend: 'cpu',
    precision: 'fp32',
    preset: 'cpu',
    diagnostics: { stdout: '', stderr: '' },
    environment: { ...FAKE_ENVIRONMENT },
  };
}

/** A `correct` result: candidate median `medianMs`, eager `eagerMs`, torch.compile unavailable (torch 1.13). */
export function correctResult(options: ResultBase & { medianMs: number; eagerMs?: number; compileMs?: number | null }): EvaluationResult {
  const eagerMs = options.eagerMs ?? 1;
  const compileMs = options.compileMs ?? null;
  const vsEager = eagerMs / options.medianMs;
  const vsCompile = compileMs === null ? null : compileMs / options.medianMs;
  return {
    verdict: 'correct',
    ...base(options),
    diagnostics: { stdout: '', stderr: '' },
    correctness: { trials: 5, passed: 5, max_abs_error: 0, max_rel_error: 0, mismatch_count: 0, atol: 0.01, rtol: 0.01, tolerance: 'kernelbench' },
    timing: {
      candidate_ms: fakeStats(options.medianMs),
      eager_ms: fakeStats(eagerMs),
      compile_ms: compileMs === null ? null : fakeStats(compileMs),
      ...(compileMs === null ? { compile_unavailable: 'torch 1.13 has no torch.compile' } : {}),
      speedup_vs_eager: vsEager,
      speedup_vs_compile: vsCompile,
      speedup_vs_best: vsCompile === null ? vsEager : Math.min(vsEager, vsCompile),
    },
    stages: { build: 45_000, load: 20, correctness: 300, timing: 900 },
  };
}

/** A `compile_error` result with a g++-style first error at `line`. */
export function compileErrorResult(options: ResultBase & { line?: number; message?: string } = {}): EvaluationResult {
  const line = options.line ?? 12;
  const message = options.message ?? "'out_ptr' was not declared in this scope";
  const first = `main.cpp:${line}:5: error: ${message}`;
  return {
    verdict: 'compile_error',
    ...base(options),
    reasons: [{ check: 'build', message: `the extension did not build: ${first}` }],
    diagnostics: {
      compiler: [
        '[1/2] c++ -MMD -MF main.o.d -O3 -fopenmp -c main.cpp -o main.o',
        'main.cpp: In function ‘at::Tensor relu(at::Tensor)’:',
        first,
        '   12 |     out_ptr[i] = x > 0 ? x : 0;',
        '      |     ^~~~~~~',
        'ninja: build stopped: subcommand failed.',
      ].join('\n'),
      first_error: first,
      stdout: '',
      stderr: '',
      traceback: 'Traceback (most recent call last):\n  ...\nRuntimeError: Error building extension',
    },
    stages: { build: 30_000 },
  };
}

/** An `incorrect` result: `mismatched` elements of 8192 outside tolerance on every trial. */
export function incorrectResult(options: ResultBase & { maxAbsError?: number; mismatched?: number } = {}): EvaluationResult {
  const maxAbsError = options.maxAbsError ?? 0.5;
  const mismatched = options.mismatched ?? 4096;
  return {
    verdict: 'incorrect',
    ...base(options),
    reasons: [{ check: 'mismatch', message: `output differs from the reference on 5 of 5 trials (max abs error ${maxAbsError})` }],
    correctness: {
      trials: 5,
      passed: 0,
      max_abs_error: maxAbsError,
      max_rel_error: 1,
      mismatch_count: mismatched * 5,
      atol: 0.01,
      rtol: 0.01,
      tolerance: 'kernelbench',
      trial_details: [
        {
          seed: 11,
          passed: false,
          check: 'mismatch',
          message: 'first mismatch at index (0, 3): got 0.0, expected 0.5',
          max_abs_error: maxAbsError,
          mismatch_count: mismatched,
          numel: 8192,
        },
      ],
    },
  };
}

/** A `runtime_error` result raised by the candidate's forward. */
export function runtimeErrorResult(options: ResultBase & { message?: string } = {}): EvaluationResult {
  const message = options.message ?? 'RuntimeError: expected a contiguous tensor';
  return {
    verdict: 'runtime_error',
    ...base(options),
    reasons: [{ check: 'forward', message: `the candidate's forward raised: ${message}` }],
    diagnostics: {
      stdout: '',
      stderr: '',
      traceback: `Traceback (most recent call last):\n  File "candidate.py", line 30, in forward\n    return self.ext.relu(x)\n${message}`,
    },
  };
}

/** A `rejected` result: the guard found torch compute in forward. */
export function rejectedResult(options: ResultBase = {}): EvaluationResult {
  return {
    verdict: 'rejected',
    ...base(options),
    reasons: [{ check: 'torch-compute-in-forward', message: 'forward calls torch.relu, a reference compute op; write the work in your own kernel' }],
  };
}

/**
 * Reads the outcome a test wants from a marker line in the candidate source:
 * `# fake-verdict: correct 0.5` (median ms), `# fake-verdict: compile_error`, `incorrect`,
 * `runtime_error`, `rejected`. A candidate without a marker is correct at 1 ms.
 */
export function judgeByMarker(source: string, request: EvaluationRequest): EvaluationResult {
  const match = /#\s*fake-verdict:\s*([a-z_]+)(?:\s+([\d.]+))?/.exec(source);
  const parts = { problem: request.problemPath, candidate: request.candidatePath };
  const verdict = match?.[1] ?? 'correct';
  switch (verdict) {
    case 'correct':
      return correctResult({ ...parts, medianMs: match?.[2] ? Number(match[2]) : 1 });
    case 'compile_error':
      return compileErrorResult(parts);
    case 'incorrect':
      return incorrectResult(parts);
    case 'runtime_error':
      return runtimeErrorResult(parts);
    case 'rejected':
      return rejectedResult(parts);
    default:
      throw new Error(`unknown fake verdict '${verdict}' in candidate ${request.candidatePath}`);
  }
}

/** One call the fake received. */
export interface FakeEvaluatorCall {
  request: EvaluationRequest;
  /** The candidate file's content when the call was made. */
  source: string;
  startedAtMs: number;
  finishedAtMs: number | null;
}

export interface FakeEvaluatorOptions {
  /** Decides each result; default `judgeByMarker`. */
  judge?: (source: string, request: EvaluationRequest, callIndex: number) => EvaluationResult | Promise<EvaluationResult>;
  /** Time each evaluation takes, in ms (real timers). Default 0. */
  delayMs?: number;
  /**
   * Run one evaluation per device slot (`cpu`, `cuda:N`) at a time, in the order asked, as the
   * Evaluator's contract asks of real ones. Default true; false lets every evaluation run at once.
   */
  onePerDevice?: boolean;
}

/**
 * A scripted `Evaluator` for tests of the search: it reads the candidate file, decides the result
 * (by default from a `# fake-verdict:` marker in it), records every call, and tracks how many
 * evaluations overlapped. An abort while waiting for the device or during the delay rejects, like
 * the real one, without a result. Its usage: the request's device slot, the wait for it, the time held.
 */
export class FakeEvaluator implements Evaluator {
  readonly calls: FakeEvaluatorCall[] = [];
  /** Most evaluations that were running at the same time. */
  maxConcurrent = 0;
  private running = 0;
  private readonly devices = new Map<string, Semaphore>();

  constructor(private readonly options: FakeEvaluatorOptions = {}) {}

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    const device = deviceSlotOf(request);
    const askedAtMs = performance.now();
    let release = (): void => undefined;
    if (this.options.onePerDevice !== false) {
      let slot = this.devices.get(device);
      if (!slot) this.devices.set(device, (slot = new Semaphore(1)));
      release = await slot.acquire(options.signal);
    }
    const startedAtMs = performance.now();
    try {
      const result = await this.judge(request, options);
      return { result, usage: { device, waitedMs: startedAtMs - askedAtMs, heldMs: performance.now() - startedAtMs } };
    } finally {
      release();
    }
  }

  private async judge(request: EvaluationRequest, options: EvaluateOptions): Promise<EvaluationResult> {
    const source = await readFile(request.candidatePath, 'utf8');
    const call: FakeEvaluatorCall = { request, source, startedAtMs: Date.now(), finishedAtMs: null };
    this.calls.push(call);
    this.running += 1;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.running);
    try {
      if (this.options.delayMs) await delay(this.options.delayMs, options.signal);
      options.signal?.throwIfAborted();
      const result = await (this.options.judge ?? judgeByMarker)(source, request, this.calls.length - 1);
      call.finishedAtMs = Date.now();
      return result;
    } finally {
      this.running -= 1;
    }
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
