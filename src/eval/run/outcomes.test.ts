import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { outcomeOfFailure } from './failure-outcome.js';
import { answerBeforePolicy, outcomeOfJudgement, summarizeCorrectness } from './judgement-outcome.js';
import type { JudgedTrial, MessageOfType } from '../process/protocol.js';
import { ProtocolError } from '../process/protocol-error.js';
import { drawSeedPlan, MAX_SEED } from './seeds.js';
import { outcomeOfWorkerEnd } from './worker-end-outcome.js';
import type { WorkerProcessResult } from '../process/worker-process-types.js';
import { endedWorker } from '../../../test-support/worker-process-result.js';

const tolerance = { atol: 0.01, rtol: 0.01 };

function trial(seed: number, fields: Partial<JudgedTrial> = {}): JudgedTrial {
  return { seed, passed: true, check: null, max_abs_error: 0, max_rel_error: 0, mismatch_count: 0, numel: 16384, ...fields };
}

function judgement(trials: JudgedTrial[]): MessageOfType<'judgement'> {
  return { v: 1, type: 'judgement', passed: trials.every((entry) => entry.passed), trials };
}

const ended = (fields: Partial<WorkerProcessResult>): WorkerProcessResult => endedWorker('candidate', fields);

describe('judgement outcomes', () => {
  it('is correct only when every trial passed', () => {
    assert.equal(outcomeOfJudgement(judgement([trial(1), trial(2)]), tolerance).verdict, 'correct');
    const mixed = outcomeOfJudgement(
      judgement([trial(1), trial(2, { passed: false, check: 'shape', message: "the output has shape (8,), the reference's is (8, 64)" })]),
      tolerance,
    );
    assert.equal(mixed.verdict, 'incorrect');
    assert.deepEqual(mixed.reasons, [{ check: 'shape', message: "the output has shape (8,), the reference's is (8, 64) (trial 2 of 2, seed 2)" }]);
  });

  it('makes a sentence from the figures when the worker sent none', () => {
    const result = outcomeOfJudgement(judgement([trial(7, { passed: false, check: 'mismatch', mismatch_count: 412, max_abs_error: 0.53 })]), tolerance);
    assert.equal(
      result.reasons[0]?.message,
      'the output differs from the reference at 412 of 16384 elements (max abs error 0.530, tolerance atol=0.01, rtol=0.01) (trial 1 of 1, seed 7)',
    );
  });

  it('rejects input mutation first, even beside mismatches', () => {
    const result = outcomeOfJudgement(
      judgement([
        trial(1, { passed: false, check: 'mismatch', message: 'm' }),
        trial(2, { passed: false, check: 'input-mutation', message: 'changed its inputs' }),
      ]),
      tolerance,
    );
    assert.equal(result.verdict, 'rejected');
    assert.deepEqual(
      result.reasons.map((reason) => reason.check),
      ['input-mutation', 'mismatch'],
    );
  });

  it("says a wrong answer before the policy's rejection of what ran, and only then", () => {
    const fallback = { verdict: 'rejected' as const, reasons: [{ check: 'torch-fallback', message: 'no kernel of its own did the work' }] };
    const wrongShape = judgement([trial(5, { passed: false, check: 'shape', message: "the output has shape (8, 10), the reference's is (8, 64)" })]);
    assert.deepEqual(answerBeforePolicy(fallback, wrongShape, tolerance), {
      verdict: 'incorrect',
      reasons: [
        { check: 'shape', message: "the output has shape (8, 10), the reference's is (8, 64) (trial 1 of 1, seed 5)" },
        { check: 'torch-fallback', message: 'no kernel of its own did the work' },
      ],
    });
    const mutated = judgement([trial(5, { passed: false, check: 'input-mutation', message: 'changed its inputs' })]);
    assert.deepEqual(
      answerBeforePolicy(fallback, mutated, tolerance).reasons.map((reason) => reason.check),
      ['input-mutation', 'torch-fallback'],
    );
    assert.equal(answerBeforePolicy(fallback, mutated, tolerance).verdict, 'rejected');
    // A right answer, no answer yet, or a rejection the policy does not decide: the outcome stands.
    assert.equal(answerBeforePolicy(fallback, judgement([trial(5)]), tolerance), fallback);
    assert.equal(answerBeforePolicy(fallback, null, tolerance), fallback);
    const stale = { verdict: 'rejected' as const, reasons: [{ check: 'stale-output', message: 'never written' }] };
    assert.equal(answerBeforePolicy(stale, wrongShape, tolerance), stale);
    const crash = { verdict: 'runtime_error' as const, reasons: [{ check: 'forward', message: 'raised' }] };
    assert.equal(answerBeforePolicy(crash, wrongShape, tolerance), crash);
  });

  it('summarizes the error profile over trials', () => {
    const summary = summarizeCorrectness(
      judgement([
        trial(1, { max_abs_error: 0.2, fp64_max_abs_error: 0.3, mismatch_count: 4 }),
        trial(2, { passed: false, max_abs_error: 0.5, max_rel_error: null, mismatch_count: 6 }),
      ]),
      { ...tolerance, source: 'profile', dtype: null },
      'kernelbench',
    );
    assert.equal(summary.passed, 1);
    assert.equal(summary.max_abs_error, 0.5);
    assert.equal(summary.max_rel_error, 0);
    assert.equal(summary.mismatch_count, 10);
    assert.deepEqual(summary.fp64, { max_abs_error: 0.3, max_rel_error: null });
    assert.equal(summary.tolerance_source, 'profile');
    assert.equal(summary.high_precision_dtype, null);
  });

  it('reports a tolerance the problem declared, and a float32 twin where float64 could not run', () => {
    const summary = summarizeCorrectness(
      judgement([
        trial(1, { fp64_max_abs_error: 0.01, high_precision_dtype: 'float64' }),
        trial(2, { fp64_max_abs_error: 0.02, high_precision_dtype: 'float32' }),
      ]),
      { atol: 0.05, rtol: 0.02, source: 'problem', dtype: 'bfloat16' },
      'kernelbench',
    );
    assert.deepEqual(
      [summary.atol, summary.rtol, summary.tolerance, summary.tolerance_source, summary.tolerance_dtype, summary.high_precision_dtype],
      [0.05, 0.02, 'kernelbench', 'problem', 'bfloat16', 'float32'],
    );
  });
});

describe('worker end outcomes', () => {
  it('names a SIGKILL as possibly out of memory', () => {
    const result = outcomeOfWorkerEnd(ended({ signal: 'SIGKILL', stage: 'timing' }), 'timing', true);
    assert.equal(result.verdict, 'crashed');
    assert.match(result.reasons[0]?.message ?? '', /died during the timing stage of SIGKILL, possibly from the kernel because the machine ran out of memory/);
  });

  it('quotes the last stderr line of a non-zero exit', () => {
    const result = outcomeOfWorkerEnd(ended({ exitCode: 1, stderr: 'Traceback…\nRuntimeError: worker bug\n' }), 'timing', true);
    assert.match(result.reasons[0]?.message ?? '', /exited with status 1 without reporting a failure; its last words on stderr: RuntimeError: worker bug/);
  });

  it('treats a request the worker refused (status 2 before any stage) as the machine, not the candidate', () => {
    const refused = ended({
      role: 'reference',
      exitCode: 2,
      stderr: 'kforge_worker: protocol error: the cuda backend needs a CUDA device, and torch sees none\n',
    });
    assert.throws(
      () => outcomeOfWorkerEnd(refused, 'reference-ready', true),
      /the reference worker refused the request: kforge_worker: protocol error: the cuda backend needs a CUDA device/,
    );
    const candidateExit = ended({ exitCode: 2, stage: 'correctness', stageDurationsMs: { build: 1, load: 1 } });
    assert.equal(outcomeOfWorkerEnd(candidateExit, 'correctness-outputs', true).verdict, 'crashed', 'candidate code may exit with 2 itself');
  });

  it('reports a protocol error as crashed / protocol', () => {
    const result = outcomeOfWorkerEnd(ended({ protocolError: new ProtocolError('the line is not JSON: `x`') }), 'timing', true);
    assert.deepEqual(result.reasons[0]?.check, 'protocol');
  });

  it('throws a setup error for a worker that died before hello', () => {
    assert.throws(
      () => outcomeOfWorkerEnd(ended({ exitCode: 1, stderr: '/usr/bin/python3: No module named kforge_worker\n' }), 'hello', false),
      (error: unknown) => {
        assert.ok(error instanceof EvaluatorSetupError);
        assert.match(error.message, /exited with status 1 before saying hello: \/usr\/bin\/python3: No module named kforge_worker/);
        return true;
      },
    );
  });
});

describe('failure outcomes', () => {
  it('adds the first error and the known cause to a build failure', () => {
    const result = outcomeOfFailure(
      {
        v: 1,
        type: 'failure',
        stage: 'build',
        kind: 'compile_error',
        check: 'build',
        message: 'the extension did not build',
        compiler_output: 'x.cu(3): error: no operator "*" matches these operands\n    operand types are: __half * __half\n',
      },
      '13.0',
    );
    assert.equal(result.verdict, 'compile_error');
    assert.equal(result.diagnostics?.first_error, 'x.cu:3: no operator "*" matches these operands');
    assert.match(
      result.reasons[0]?.message ?? '',
      /^the extension did not build \(first error: x\.cu:3: no operator .*\); PyTorch builds extensions with -D__CUDA_NO_HALF_OPERATORS__/,
    );
  });
});

describe('seeds', () => {
  it('draws distinct seeds in range and distinct sorted sample calls', () => {
    let state = 7;
    const random = (upper: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % upper;
    };
    const plan = drawSeedPlan({ trials: 5, timingSeeds: 3, perfTrials: 100, sampleCalls: 3 }, random);
    const seeds = [...plan.correctness, ...plan.timing];
    assert.equal(plan.correctness.length, 5);
    assert.equal(plan.timing.length, 3);
    assert.equal(new Set(seeds).size, 8);
    assert.ok(seeds.every((seed) => seed >= 0 && seed <= MAX_SEED));
    assert.equal(plan.sampleCalls.length, 3);
    assert.deepEqual(
      [...plan.sampleCalls].sort((a, b) => a - b),
      plan.sampleCalls,
    );
    assert.ok(plan.sampleCalls.every((call) => call >= 0 && call < 100));
    assert.deepEqual(drawSeedPlan({ trials: 2, timingSeeds: 0, perfTrials: 2, sampleCalls: 3 }).sampleCalls.length, 2);
    const fresh = drawSeedPlan({ trials: 5, timingSeeds: 3, perfTrials: 100, sampleCalls: 3 });
    assert.notDeepEqual(fresh.correctness, drawSeedPlan({ trials: 5, timingSeeds: 3, perfTrials: 100, sampleCalls: 3 }).correctness);
  });
});
