import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namingOriginals } from './candidate-inputs.js';

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
