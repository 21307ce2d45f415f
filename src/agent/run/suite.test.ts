import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { resolveProblemFiles } from './suite.js';
import { SuiteError } from './suite-error.js';

const PROBLEM = 'import torch\nclass Model(torch.nn.Module):\n    pass\n';

test('a folder gives its problem files in natural order; helpers and other files are skipped', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-suite-'));
  try {
    await mkdir(path.join(folder, 'level1'));
    for (const name of ['10_b.py', '2_a.py', '1_c.py']) await writeFile(path.join(folder, 'level1', name), PROBLEM);
    await writeFile(path.join(folder, 'level1', 'utils.py'), 'def helper(): pass\n');
    await writeFile(path.join(folder, 'level1', 'notes.txt'), PROBLEM);
    const files = await resolveProblemFiles([path.join(folder, 'level1')]);
    assert.deepEqual(
      files.map((file) => path.basename(file)),
      ['1_c.py', '2_a.py', '10_b.py'],
    );
    const mixed = await resolveProblemFiles(['level1/2_a.py', 'level1'], folder);
    assert.deepEqual(
      mixed.map((file) => path.basename(file)),
      ['2_a.py', '1_c.py', '10_b.py'],
      'a file named twice counts once',
    );
    await assert.rejects(
      resolveProblemFiles(['level1/utils.py'], folder),
      (error: unknown) => error instanceof SuiteError && /not a problem file/.test(error.message),
    );
    await assert.rejects(resolveProblemFiles(['missing'], folder), /no such file or folder: missing/);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('the shipped level 1 folder resolves to every problem in it, in order', async () => {
  const root = path.resolve(import.meta.dirname, '../../..');
  const files = await resolveProblemFiles(['problems/level1'], root);
  const listed = (await readdir(path.join(root, 'problems', 'level1'))).filter((name) => name.endsWith('.py')).sort();
  assert.deepEqual(
    files.map((file) => path.basename(file)),
    listed,
    'zero-padded names: natural and plain order agree',
  );
  assert.match(files[0]!, /01_relu\.py$/);
});

test('a problem folder is its reference.py: named itself, or met while a suite folder is walked; its other files are no problems', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'kforge-suite-'));
  try {
    // KernelBench-Hard's layout: problems/<name>/ with reference.py, shapes.py, problem.yaml, check.py and a solution defining Model.
    for (const name of ['10_topk', '02_kda']) {
      const problem = path.join(folder, 'problems', name);
      await mkdir(problem, { recursive: true });
      await writeFile(path.join(problem, 'reference.py'), PROBLEM);
      await writeFile(path.join(problem, 'shapes.py'), 'SHAPES = [{"M": 1}]\n');
      await writeFile(path.join(problem, 'solution.py'), PROBLEM);
      await writeFile(path.join(problem, 'check.py'), 'import reference\n');
    }
    await writeFile(path.join(folder, 'problems', '01_single.py'), PROBLEM);
    const walked = await resolveProblemFiles(['problems'], folder);
    assert.deepEqual(
      walked.map((file) => path.relative(folder, file)),
      ['problems/01_single.py', 'problems/02_kda/reference.py', 'problems/10_topk/reference.py'],
    );
    const named = await resolveProblemFiles(['problems/10_topk', 'problems/10_topk/reference.py'], folder);
    assert.deepEqual(
      named.map((file) => path.relative(folder, file)),
      ['problems/10_topk/reference.py'],
      'the folder and its reference.py are one problem',
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
