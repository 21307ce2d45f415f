import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Attempt, EvaluatedAttempt } from '../search/state/attempt.js';
import { correctResult } from '../../../test-support/fake-evaluator.js';
import { CandidateNumbers } from './candidate-numbers.js';

const lineage = { round: 0, parentCandidateId: null, idea: null };

function evaluated(id: number): EvaluatedAttempt {
  const candidate = { id, source: '', path: `/c/${id}.py`, lineage, modelCallId: null };
  return { kind: 'evaluated', lineage, candidate, result: correctResult({ problem: '/p.py', candidate: `/c/${id}.py`, medianMs: 1 }), deviceMs: 1 };
}

test('numbers follow the replies that took a slot: a reply without code takes one, a failed call none', () => {
  const history: Attempt[] = [
    evaluated(41),
    { kind: 'model-failed', lineage, message: 'HTTP 503' },
    { kind: 'no-code', lineage, modelCallId: 3, reason: 'no code' },
    evaluated(57),
  ];
  const numbers = new CandidateNumbers(history);
  assert.equal(numbers.of(41), 1);
  assert.equal(numbers.of(57), 3);
  const next = numbers.nextReply();
  assert.equal(next, 4);
  numbers.assign(90, next);
  assert.equal(numbers.of(90), 4);
  assert.equal(numbers.of(77), 5, 'a candidate left pending by a stopped run takes the next number, once');
  assert.equal(numbers.of(77), 5);
  assert.equal(numbers.nextReply(), 6);
});
