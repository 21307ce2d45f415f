import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findingOfFailure, findingsOfAudit, workerAuditSchema, type WorkerAudit } from './problem-audit.js';

/** The audit object of docs/worker-protocol.md ("The audit command"), as the worker prints it. */
const printed = {
  problem: 'problems/softmax.py',
  preset: 'cpu',
  precision: 'fp32',
  device: 'cpu',
  seeds: [11, 12, 13, 14, 15],
  degenerate: true,
  passing: ['zeros', 'mean'],
  exact_trivial: [],
  scale_aware_threshold: 0.01,
  atol: 0.01,
  rtol: 0.01,
  trials: 5,
  trivial: {
    zeros: { applicable: true, passes: true, max_abs_error: 0.0045, relative_l2_error: 1 },
    input: { applicable: false, passes: false, max_abs_error: null, relative_l2_error: null },
  },
};

test('a trivial output within the tolerance is a warning; an exactly right one is an error', () => {
  const audit: WorkerAudit = workerAuditSchema.parse(printed);
  assert.deepEqual(
    findingsOfAudit(audit).map((finding) => [finding.level, finding.check]),
    [['warning', 'degenerate']],
  );
  assert.match(findingsOfAudit(audit)[0]!.message, /passes the tolerance \(atol 0\.01, rtol 0\.01\) in all 5 trials \(zeros, mean\)/);
  assert.deepEqual(findingsOfAudit({ ...audit, degenerate: false, passing: [] }), []);
  const exact = findingsOfAudit({ ...audit, exact_trivial: ['zeros'] });
  assert.deepEqual(
    exact.map((finding) => [finding.level, finding.check]),
    [
      ['error', 'exact-trivial'],
      ['warning', 'degenerate'],
    ],
  );
});

test('a problem the worker could not audit is one error with its check', () => {
  assert.deepEqual(findingOfFailure({ problem: 'x.py', error: { kind: 'invalid_input', check: 'reference-forward', message: 'forward raised' } }), {
    level: 'error',
    check: 'reference-forward',
    message: 'forward raised',
  });
  assert.equal(workerAuditSchema.safeParse({ ...printed, degenerate: 'yes' }).success, false);
});
