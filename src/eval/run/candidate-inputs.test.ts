import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { ScratchDirectory } from '../process/scratch-directory.js';
import { namingOriginals, stageCandidateInputs } from './candidate-inputs.js';

test("a result names the user's files, not their staged copies in the scratch", () => {
  const staged = { problemPath: '/tmp/kforge-ab12/in/problem/gelu.py', candidatePath: '/tmp/kforge-ab12/in/candidate/fast.py' };
  const originals = { problemPath: '/home/me/problems/gelu.py', candidatePath: '/home/me/runs/fast.py' };
  const result = {
    verdict: 'runtime_error',
    reasons: [{ check: 'import', message: 'the problem file /tmp/kforge-ab12/in/problem/gelu.py defines no function get_inputs()' }],
    diagnostics: {
      traceback: 'File "/tmp/kforge-ab12/in/candidate/fast.py", line 2\nFile "/tmp/kforge-ab12/in/candidate/fast.py", line 9',
      stderr: 'loading /tmp/kforge-ab12/in/problem/gelu.py',
      stdout: '',
    },
    problem: originals.problemPath,
  };
  const named = namingOriginals(result, staged, originals);
  assert.equal(named.reasons[0]?.message, 'the problem file /home/me/problems/gelu.py defines no function get_inputs()');
  assert.equal(named.diagnostics.traceback, 'File "/home/me/runs/fast.py", line 2\nFile "/home/me/runs/fast.py", line 9');
  assert.equal(named.diagnostics.stderr, 'loading /home/me/problems/gelu.py');
  assert.equal(named.verdict, 'runtime_error');
  assert.equal(result.reasons[0]?.message.includes('/tmp/kforge-ab12'), true, 'the original result is left as it was');
});

test("a problem folder's reference is staged with its shapes and problem.yaml, and nothing else of the folder", async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'kforge-stage-'));
  try {
    const folder = path.join(root, 'folder');
    await mkdir(folder);
    for (const name of ['reference.py', 'shapes.py', 'problem.yaml', 'check.py', 'solution.py']) await writeFile(path.join(folder, name), `# ${name}\n`);
    await writeFile(path.join(root, 'candidate.py'), '# candidate\n');
    await writeFile(path.join(root, 'single.py'), '# a single-file problem\n');
    const scratch = { inputDirectory: path.join(root, 'in') } as ScratchDirectory;
    const staged = await stageCandidateInputs(scratch, path.join(folder, 'reference.py'), path.join(root, 'candidate.py'));
    assert.equal(staged.problemPath, path.join(root, 'in', 'problem', 'reference.py'));
    assert.deepEqual((await readdir(path.join(root, 'in', 'problem'))).sort(), ['problem.yaml', 'reference.py', 'shapes.py']);
    assert.equal(await readFile(path.join(root, 'in', 'problem', 'problem.yaml'), 'utf8'), '# problem.yaml\n');
    const alone = { inputDirectory: path.join(root, 'in2') } as ScratchDirectory;
    await stageCandidateInputs(alone, path.join(root, 'single.py'), path.join(root, 'candidate.py'));
    assert.deepEqual(await readdir(path.join(root, 'in2', 'problem')), ['single.py']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
