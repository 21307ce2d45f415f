import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fake from '../../test-support/fake-evaluator.js';
import * as seeded from '../../test-support/seeded-store/seed-results.js';
import { correctResult, failedResult } from '../../test-support/evaluation-results.js';
import { evaluationResultSchema, VERDICTS, type EvaluationResult, type Verdict } from './verdict.js';

/**
 * The verdict's schema (docs/spec.md section 6): what a result holds follows its verdict. The
 * worker-produced results themselves are checked where they are made: src/eval/run/python-evaluator.test.ts
 * (fake worker) and python-evaluator.e2e.test.ts (the real one) parse every result they get.
 */

function issues(value: unknown): string[] {
  const parsed = evaluationResultSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

function accepts(value: unknown, label: string): void {
  assert.deepEqual(issues(value), [], label);
}

function refuses(value: unknown, path: string, label: string): void {
  const found = issues(value);
  assert.ok(
    found.some((issue) => issue.startsWith(`${path}:`)),
    `${label}: expected an issue at \`${path}\`, got ${JSON.stringify(found)}`,
  );
}

const correct = (): EvaluationResult => correctResult(2, { eagerMs: 4, compileMs: 3 });
const failed = (verdict: Exclude<Verdict, 'correct'>): EvaluationResult => failedResult(verdict, { check: 'build', message: 'the extension did not build' });

const attribution = { own_share: 1, by_origin_ms: { own: 1, library: 0, torch: 0 }, torch_ops: [], substituted_ops: [], measured: 'host' };
const guard = {
  policy: 'kernelbench',
  findings: [{ check: 'torch-compute-in-forward', severity: 'note', message: 'forward calls torch.relu', line: 12 }],
  checks: [{ stage: 'correctness', check: 'stale-output', status: 'passed', message: 'every output was written by the call' }],
  audit: { degenerate: false, passing: [], exact_trivial: [], scale_aware_threshold: null },
  speed_of_light: { bytes: 8_388_608, flops: 2_097_152, lower_bound_ms: 0.002, share_of_bound: 0.5 },
  generalisation: { gated: true, trials: [{ variant: { N: 4096 }, seed: 7, passed: true, message: null }] },
  notes: [],
};

describe('the verdict union accepts every result the project builds', () => {
  it('the store fixtures, one per verdict', () => {
    accepts(correct(), 'correct');
    for (const verdict of VERDICTS) if (verdict !== 'correct') accepts(failed(verdict), verdict);
  });

  it("the dashboard's seeded results and the fake evaluator's", () => {
    const bound = { bytes: 8, flops: 2, lowerBoundMs: 0.5 };
    const build = seeded.cudaBuild([{ name: 'relu_kernel', registers: 16, shared: 0, local: 0 }], '.ptx', 'SASS');
    for (const [label, result] of Object.entries({
      'seeded correct': seeded.correct('cuda', { medianMs: 1, eagerMs: 2, compileMs: null, build, bound, notes: ['a note'] }),
      'seeded compile_error': seeded.compileError('cuda', 'main.cu:3: error: x', 'log'),
      'seeded incorrect': seeded.incorrect('cpu', { maxAbsError: 1, maxRelError: 1, mismatched: 3, numel: 8, message: 'differs' }),
      'seeded rejected': seeded.rejected('cpu', [{ check: 'torch-compute-in-forward', message: 'torch.relu in forward' }], 4),
      'seeded runtime_error': seeded.runtimeError('cpu', 'RuntimeError: x', 'Traceback'),
      'seeded timeout': seeded.timedOut('cpu', 'timing', 60),
      'fake correct': fake.correctResult({ medianMs: 1 }),
      'fake compile_error': fake.compileErrorResult(),
      'fake incorrect': fake.incorrectResult(),
      'fake runtime_error': fake.runtimeErrorResult(),
      'fake rejected': fake.rejectedResult(),
    })) {
      accepts(result, label);
    }
  });

  it('a correct result without timing (--no-timing, skipTiming) and one with attribution and a full guard report', () => {
    const { timing: _timing, ...untimed } = correct();
    accepts(untimed, 'correct, untimed');
    accepts({ ...correct(), attribution, guard }, 'correct with attribution and guard');
    accepts({ ...failed('rejected'), attribution, guard }, 'rejected with attribution');
  });

  it('results stored before attribution, and guard reports naming a former policy', () => {
    // correctResult has no `attribution`: results stored before it was recorded.
    accepts(correct(), 'correct without attribution');
    accepts({ ...correct(), guard: { ...guard, policy: 'default' } }, 'the alias `default` in a stored guard report');
    accepts({ ...failed('compile_error'), guard: { ...guard, policy: null } }, 'a guard report without a static guard message');
  });

  it('a failure of any kind may keep the compiler output, first error and traceback', () => {
    for (const verdict of VERDICTS) {
      if (verdict === 'correct') continue;
      accepts(
        {
          ...failed(verdict),
          diagnostics: { stdout: '', stderr: '', compiler: 'c++ …', first_error: 'main.cpp:1: error', known_cause: 'x', traceback: 'Traceback' },
        },
        verdict,
      );
    }
  });
});

describe('the verdict union refuses inconsistent results', () => {
  it('a correct result with reasons, or without its correctness trials', () => {
    refuses({ ...correct(), reasons: [{ check: 'mismatch', message: 'differs' }] }, 'reasons', 'correct with a reason');
    const { correctness: _correctness, ...unjudged } = correct();
    refuses(unjudged, 'correctness', 'correct without correctness');
  });

  it("a correct result with a failure's diagnostics", () => {
    refuses({ ...correct(), diagnostics: { stdout: '', stderr: '', compiler: 'error: expected ;' } }, 'diagnostics.compiler', 'compiler output');
    refuses({ ...correct(), diagnostics: { stdout: '', stderr: '', first_error: 'main.cpp:1: error' } }, 'diagnostics.first_error', 'first error');
    refuses({ ...correct(), diagnostics: { stdout: '', stderr: '', known_cause: 'nvcc too old' } }, 'diagnostics.known_cause', 'known cause');
    refuses({ ...correct(), diagnostics: { stdout: '', stderr: '', traceback: 'Traceback' } }, 'diagnostics.traceback', 'traceback');
  });

  it('any other verdict without a reason', () => {
    for (const verdict of VERDICTS) {
      if (verdict !== 'correct') refuses({ ...failed(verdict), reasons: [] }, 'reasons', `${verdict} without reasons`);
    }
  });

  it('timing on any verdict but correct, attribution on any but correct and rejected', () => {
    const { timing } = correct();
    for (const verdict of VERDICTS) {
      if (verdict === 'correct') continue;
      refuses({ ...failed(verdict), timing }, 'timing', `${verdict} with timing`);
      if (verdict !== 'rejected') refuses({ ...failed(verdict), attribution }, 'attribution', `${verdict} with attribution`);
    }
  });

  it('an unknown verdict, and a guard report or build info of the wrong shape', () => {
    refuses({ ...correct(), verdict: 'great' }, 'verdict', 'unknown verdict');
    refuses({ ...failed('rejected'), guard: { notes: [] } }, 'guard.policy', 'a partial guard report');
    refuses(
      { ...failed('rejected'), guard: { ...guard, findings: [{ check: 'x', severity: 'fatal', message: 'm' }] } },
      'guard.findings.0.severity',
      'an unknown severity',
    );
    refuses({ ...correct(), guard: { ...guard, speed_of_light: { bytes: 1, flops: 1 } } }, 'guard.speed_of_light.lower_bound_ms', 'a bound without its figure');
    refuses({ ...failed('compile_error'), build: { kernels: [{ registers: 16 }] } }, 'build.kernels.0.name', 'a kernel without a name');
  });
});
