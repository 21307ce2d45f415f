import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProblemConstants } from '../../eval/problem/problem-constants.js';
import { resolveProblemOverrides } from './problem-overrides.js';
import { parseSizeSettings } from '../flags/size-flags.js';
import { UsageError } from '../io/usage-error.js';

const MATMUL = '/suite/level1/1_Square_matrix_multiplication_.py';
const RELU = '/suite/level1/19_ReLU.py';
const CONV = '/suite/level2/conv.py';

const CONSTANTS: Record<string, ProblemConstants> = {
  [MATMUL]: { ok: true, assigned: ['N', 'KFORGE_PRESETS'], constants: ['N'] },
  [RELU]: { ok: true, assigned: ['batch_size', 'dim'], constants: ['batch_size', 'dim'] },
  [CONV]: { ok: true, assigned: ['batch_size', 'in_channels', 'N'], constants: ['batch_size', 'in_channels', 'N'] },
};

const resolve = (problems: string[], ...set: string[]) => resolveProblemOverrides(problems, parseSizeSettings(set), (problem) => CONSTANTS[problem], '/suite');

const usageError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof UsageError, String(error));
  assert.match(error.message, pattern);
  return true;
};

describe('parseSizeSettings', () => {
  it('reads NAME=VALUE and PROBLEM:NAME=VALUE, numbers and booleans', () => {
    assert.deepEqual(parseSizeSettings(['batch_size=256', '1_Square_matrix_multiplication_:N=512', 'level1/19_ReLU.py : fused = true']), [
      { scope: null, name: 'batch_size', value: 256, text: 'batch_size=256' },
      { scope: '1_Square_matrix_multiplication_', name: 'N', value: 512, text: '1_Square_matrix_multiplication_:N=512' },
      { scope: 'level1/19_ReLU.py', name: 'fused', value: true, text: 'level1/19_ReLU.py : fused = true' },
    ]);
  });

  it('refuses a value that is no NAME=VALUE or no number, naming what was given', () => {
    assert.throws(() => parseSizeSettings(['batch_size']), usageError(/^expected `--set` to be NAME=VALUE or PROBLEM:NAME=VALUE .*got `batch_size`$/));
    assert.throws(() => parseSizeSettings(['relu:N=big']), usageError(/^expected `--set relu:N=big` to give a number or true\/false, got `big`$/));
  });
});

describe('resolveProblemOverrides: each --set where its name exists', () => {
  it('gives each problem the names it has and says which problem was left out of which', () => {
    const { byProblem, notes } = resolve([MATMUL, RELU, CONV], 'batch_size=64', 'N=512');
    assert.deepEqual(Object.fromEntries(byProblem), {
      [MATMUL]: { N: 512 },
      [RELU]: { batch_size: 64 },
      [CONV]: { batch_size: 64, N: 512 },
    });
    assert.deepEqual(notes, [
      '--set batch_size=64 left out for 1_Square_matrix_multiplication_.py, which has no module-level constant `batch_size` (its constants: N)',
      '--set N=512 left out for 19_ReLU.py, which has no module-level constant `N` (its constants: batch_size, dim)',
    ]);
  });

  it('says so when a problem has none of the names: it runs at its own sizes', () => {
    const { byProblem, notes } = resolve([MATMUL, RELU], 'N=256');
    assert.deepEqual(Object.fromEntries(byProblem), { [MATMUL]: { N: 256 } });
    assert.deepEqual(notes, [
      '--set N=256 left out for 19_ReLU.py, which has no module-level constant `N` (its constants: batch_size, dim); it is evaluated at its own sizes',
    ]);
  });

  it('scopes a value to the problem it names, by file name with or without .py or by path; it wins over an unscoped one', () => {
    const { byProblem, notes } = resolve([MATMUL, CONV], 'N=512', '1_Square_matrix_multiplication_:N=128', 'level2/conv.py:in_channels=3');
    assert.deepEqual(Object.fromEntries(byProblem), { [MATMUL]: { N: 128 }, [CONV]: { N: 512, in_channels: 3 } });
    assert.deepEqual(notes, []);
    assert.deepEqual(Object.fromEntries(resolve([MATMUL, RELU], '19_ReLU.py:dim=8').byProblem), { [RELU]: { dim: 8 } });
  });

  it('refuses a name no problem has, a scope that names no problem, and a scoped name its problem lacks', () => {
    assert.throws(
      () => resolve([MATMUL, RELU], 'batch=4'),
      usageError(/^--set batch=4: none of the 2 problems has a module-level constant `batch` \(their constants: N, batch_size, dim\)$/),
    );
    assert.throws(
      () => resolve([RELU], 'batchsize=4'),
      usageError(
        /^--set batchsize=4: the problem 19_ReLU\.py has no module-level constant `batchsize` \(its constants: batch_size, dim; did you mean batch_size\?\)$/,
      ),
    );
    assert.throws(
      () => resolve([MATMUL, RELU], '1_Square_matrix_multiplication:N=4'),
      usageError(
        /^--set 1_Square_matrix_multiplication:N=4: no problem of this command is `1_Square_matrix_multiplication` .*: 1_Square_matrix_multiplication_, 19_ReLU; did you mean 1_Square_matrix_multiplication_\?\)$/,
      ),
    );
    assert.throws(
      () => resolve([MATMUL, RELU], '19_ReLU:N=4'),
      usageError(/^--set 19_ReLU:N=4: the problem 19_ReLU\.py has no module-level constant `N` \(its constants: batch_size, dim\)$/),
    );
  });

  it('gives a problem whose constants cannot be read no unscoped value; its evaluation says why it cannot load', () => {
    const broken = '/suite/broken.py';
    const { byProblem, notes } = resolveProblemOverrides(
      [broken, RELU],
      parseSizeSettings(['dim=8']),
      (problem) => (problem === broken ? { ok: false, message: 'does not parse' } : CONSTANTS[problem]),
      '/suite',
    );
    assert.deepEqual(Object.fromEntries(byProblem), { [RELU]: { dim: 8 } });
    assert.deepEqual(notes, []);
  });
});
