import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { evaluationResultSchema, type EvaluationResult } from '../../core/verdict.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import type { EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import { FakeEvaluator } from '../../../test-support/fake-evaluator.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { registerEvalCommand } from './eval.js';

const PROBLEM = fixturePath('fake-scenarios', 'problem.py');
const CANDIDATE = fixturePath('fake-scenarios', 'candidate-correct.py');

/** `kforge eval` in this process with an injected evaluator; what it wrote and its exit status. */
async function runEval(evaluator: Evaluator & { close?: () => Promise<void> }, ...flags: string[]) {
  const seen = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().exitOverride();
  registerEvalCommand(program, {
    createEvaluator: () => evaluator,
    stdout: { write: (text: string) => void (seen.stdout += text) },
    stderr: { write: (text: string) => void (seen.stderr += text) },
    setExitCode: (code) => void (seen.exitCode = code),
    environment: {},
    cwd: process.cwd(),
    color: false,
  });
  await program.parseAsync(['node', 'kforge', 'eval', PROBLEM, CANDIDATE, '--backend', 'cpu', ...flags]);
  return seen;
}

/** The evaluator, counting its `close` calls; one while it evaluates fails the test. */
function closable<T extends Evaluator>(evaluator: T): T & { close: () => Promise<void>; closed: number } {
  let evaluating = false;
  const counted = Object.assign(evaluator, {
    closed: 0,
    close: async () => {
      assert.equal(evaluating, false, 'closed while its evaluation ran');
      counted.closed += 1;
    },
  });
  const evaluate = evaluator.evaluate.bind(evaluator);
  counted.evaluate = async (request: EvaluationRequest, options) => {
    evaluating = true;
    try {
      return await evaluate(request, options);
    } finally {
      evaluating = false;
    }
  };
  return counted;
}

describe('kforge eval: the evaluator it made is closed when the command ends', () => {
  it('after a verdict, with the JSON output unchanged', async () => {
    const evaluator = closable(new FakeEvaluator({ judge: () => correctResult() }));
    const seen = await runEval(evaluator, '--json');
    assert.equal(seen.exitCode, 0, seen.stderr);
    assert.equal(evaluationResultSchema.parse(JSON.parse(seen.stdout)).verdict, 'correct');
    assert.equal(evaluator.closed, 1);
  });

  it('after a cancelled evaluation too (exit 130)', async () => {
    const cancelled: Evaluator = {
      evaluate: async () => {
        throw new EvaluationCancelledError('test');
      },
    };
    const evaluator = closable(cancelled);
    const seen = await runEval(evaluator, '--json');
    assert.equal(seen.exitCode, 130);
    assert.equal(seen.stdout, '');
    assert.equal(evaluator.closed, 1);
  });
});

function correctResult(): EvaluationResult {
  return {
    verdict: 'correct',
    reasons: [],
    problem: PROBLEM,
    candidate: CANDIDATE,
    backend: 'cpu',
    precision: 'fp32',
    correctness: { trials: 5, passed: 5, max_abs_error: 0, max_rel_error: 0 },
    diagnostics: { stdout: '', stderr: '' },
    environment: null,
  };
}
