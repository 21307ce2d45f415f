import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { evaluationResultSchema, type Verdict } from '../../core/verdict.js';
import { fixturePath, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import type { EvaluationRequest } from '../evaluator.js';
import { FileBaselineCache } from '../cache/file-baseline-cache.js';
import { PythonEvaluator } from './python-evaluator.js';

/**
 * Every verdict the fake worker's scenarios (test-support/fixtures/fake-scenarios) lead to, as the
 * evaluator assembles it, parses under the verdict's union (src/core/verdict.ts): the schema is no
 * stricter than what the evaluator produces. The real worker's verdicts are parsed the same way in
 * python-evaluator.e2e.test.ts.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-worker-verdicts-'));
after(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
function evaluator(): PythonEvaluator {
  counter += 1;
  const scratchRoot = path.join(root, `scratch-${counter}`);
  mkdirSync(scratchRoot, { recursive: true });
  return new PythonEvaluator({
    workerDirectory: fixturePath('fake-worker'),
    python: TEST_PYTHON,
    baselineCache: new FileBaselineCache({ directory: path.join(root, `cache-${counter}`) }),
    scratchRoot,
    terminationGraceMs: 200,
  });
}

const SCENARIOS: Array<{ label: string; scenario: string; verdict: Verdict; overrides?: Partial<EvaluationRequest> }> = [
  { label: 'correct, timed', scenario: 'correct', verdict: 'correct' },
  { label: 'correct, skipTiming', scenario: 'correct', verdict: 'correct', overrides: { skipTiming: true, trials: 2 } },
  { label: 'incorrect', scenario: 'incorrect', verdict: 'incorrect' },
  { label: 'rejected: input mutation', scenario: 'mutation', verdict: 'rejected' },
  { label: 'rejected: timed outputs differ', scenario: 'timed-cheat', verdict: 'rejected' },
  { label: 'compile_error', scenario: 'compile_error', verdict: 'compile_error' },
  { label: 'timeout', scenario: 'hang-build', verdict: 'timeout', overrides: { timeoutsSeconds: { build: 1 } } },
  { label: 'crashed: a signal', scenario: 'segfault', verdict: 'crashed' },
  { label: 'crashed: garbage on the channel', scenario: 'garbage', verdict: 'crashed' },
  { label: 'crashed: messages out of order', scenario: 'out-of-order', verdict: 'crashed' },
  { label: 'a flood of output', scenario: 'spam', verdict: 'correct' },
  {
    label: 'invalid_input: the problem',
    scenario: 'correct',
    verdict: 'invalid_input',
    overrides: { problemPath: fixturePath('fake-scenarios', 'problem-invalid.py') },
  },
  {
    label: 'invalid_input: a missing candidate file',
    scenario: 'correct',
    verdict: 'invalid_input',
    overrides: { candidatePath: '/nonexistent/candidate.py' },
  },
];

describe('verdicts of the fake worker parse under the verdict union', () => {
  for (const { label, scenario, verdict, overrides } of SCENARIOS) {
    it(label, async () => {
      const { result } = await evaluator().evaluate({
        problemPath: fixturePath('fake-scenarios', 'problem.py'),
        candidatePath: fixturePath('fake-scenarios', `candidate-${scenario}.py`),
        backend: 'cpu',
        precision: 'fp32',
        tolerance: 'kernelbench',
        perfTrials: 20,
        ...overrides,
      });
      const parsed = evaluationResultSchema.safeParse(result);
      assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
      assert.equal(result.verdict, verdict, JSON.stringify(result.reasons));
      // A parse keeps every field: nothing the evaluator wrote is dropped on the way to the store or the API.
      assert.deepEqual(JSON.parse(JSON.stringify(parsed.data)), JSON.parse(JSON.stringify(result)));
    });
  }
});
