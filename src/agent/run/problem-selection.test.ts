import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { matchesProblem, readProblemList, selectProblems } from './problem-selection.js';
import { SuiteError } from './suite-error.js';

const root = '/suite';
const files = ['level1/1_Square_matrix_multiplication_.py', 'level1/19_ReLU.py', 'level1/54_conv_standard_3D.py', 'level2/1_Conv2D_ReLU_BiasAdd.py'].map(
  (file) => path.join(root, file),
);
const pick = (filter?: string, limit?: number) => selectProblems(files, { filter, limit }, (file) => file, root).map((file) => path.relative(root, file));

test('--filter: a substring of the name or path, case-insensitive; globs over the name or path; commas for several', () => {
  assert.deepEqual(pick('relu'), ['level1/19_ReLU.py', 'level2/1_Conv2D_ReLU_BiasAdd.py']);
  assert.deepEqual(pick('level1/*conv*'), ['level1/54_conv_standard_3D.py']);
  assert.deepEqual(pick('1_*'), ['level1/1_Square_matrix_multiplication_.py', 'level2/1_Conv2D_ReLU_BiasAdd.py']);
  assert.deepEqual(pick('matrix, 19_relu'), ['level1/1_Square_matrix_multiplication_.py', 'level1/19_ReLU.py']);
  assert.ok(!matchesProblem(files[0]!, 'level2', root));
  assert.ok(matchesProblem(files[3]!, '**/*.py', root));
});

test('--limit takes the first N after the filter, in suite order', () => {
  assert.deepEqual(pick(undefined, 2), ['level1/1_Square_matrix_multiplication_.py', 'level1/19_ReLU.py']);
  assert.deepEqual(pick('conv', 1), ['level1/54_conv_standard_3D.py']);
});

test('a filter that keeps nothing is an error saying how many there were', () => {
  assert.throws(
    () => pick('softmax'),
    (error: unknown) => error instanceof SuiteError && /no problem matches --filter softmax \(of 4\)/.test(error.message),
  );
});

test('a problem list: one path a line relative to the list, comments and blank lines skipped', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-list-'));
  try {
    const list = path.join(folder, 'subset.txt');
    await writeFile(list, '# the ones that failed yesterday\nlevel1/19_ReLU.py\n\n  level2   # whole level\n');
    assert.deepEqual(await readProblemList('subset.txt', folder), [path.join(folder, 'level1/19_ReLU.py'), path.join(folder, 'level2')]);
    await writeFile(list, '# nothing\n');
    await assert.rejects(readProblemList(list, folder), /names no problem/);
    await assert.rejects(readProblemList('missing.txt', folder), /cannot read the problem list missing\.txt: ENOENT/);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
