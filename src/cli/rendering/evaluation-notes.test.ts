import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EvaluationResult } from '../../core/verdict.js';
import { firstMismatchLine, guardNoteLines, withoutNoise } from './evaluation-notes.js';

const base: EvaluationResult = {
  verdict: 'incorrect',
  reasons: [],
  problem: 'p.py',
  candidate: 'c.py',
  backend: 'cpu',
  precision: 'fp32',
  diagnostics: { stdout: '', stderr: '' },
  environment: null,
};

test('the first mismatch names the trial, seed, index, both values and their difference', () => {
  const result: EvaluationResult = {
    ...base,
    correctness: {
      trials: 2,
      passed: 1,
      max_abs_error: 1.25,
      max_rel_error: 5,
      trial_details: [
        { seed: 7, passed: true, first_mismatch: null },
        { seed: 8, passed: false, first_mismatch: { index: [0, 3], expected: 0.25, actual: 1.5, leaf: null } },
      ],
    },
  };
  assert.equal(firstMismatchLine(result), 'trial 2 (seed 8), output[0, 3]: expected 0.25, got 1.5 (difference 1.25)');
  const nan = {
    ...result,
    correctness: { ...result.correctness!, trial_details: [{ seed: 1, passed: false, first_mismatch: { index: [2], expected: 1, actual: 'nan', leaf: 1 } }] },
  };
  assert.equal(firstMismatchLine(nan), 'trial 1 (seed 1), output leaf 1[2]: expected 1, got nan');
  assert.equal(firstMismatchLine(base), null);
});

test("the guard's notes, and a tolerance a trivial output passes, are lines for a person", () => {
  const result: EvaluationResult = {
    ...base,
    guard: {
      policy: 'kernelbench',
      findings: [],
      checks: [],
      speed_of_light: null,
      generalisation: null,
      notes: ['this problem is trivial under its tolerance: zeros is exactly right; flag the problem, not the kernel'],
      audit: { degenerate: true, passing: ['zeros', 'mean'], exact_trivial: ['zeros'] },
    },
  };
  const lines = guardNoteLines(result);
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /trivial under its tolerance/);
  assert.match(lines[1]!, /lets a trivial output pass \(zeros, mean\), so the outputs were also judged by their relative L2 error/);
  assert.deepEqual(guardNoteLines(base), []);
});

test("torch's import-time CUDA_HOME line is not the candidate's output", () => {
  assert.equal(withoutNoise("No CUDA runtime is found, using CUDA_HOME='/usr/local'\nSegmentation fault"), 'Segmentation fault');
});
