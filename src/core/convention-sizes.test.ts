import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { REPOSITORY_ROOT } from './repository-paths.js';

// CONTRIBUTING's convention 4, held: scripts/sizes.mjs lists every file over 300 lines and every function over 60
// that does not say why ("Longer than convention 4's ... lines: ..."), and exits 1 when there is one.
test('every file within 300 lines and every function within 60, or the reason given in the file (convention 4)', () => {
  const checker = spawnSync(process.execPath, [path.join('scripts', 'sizes.mjs'), 'src', 'web/src'], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
  assert.equal(checker.stderr, '');
  assert.equal(checker.stdout, '', `over convention 4's limits with no reason given:\n${checker.stdout}`);
  assert.equal(checker.status, 0);
});

test('the size checker reports a function over 60 lines that gives no reason', () => {
  const checker = spawnSync(process.execPath, [path.join('scripts', 'sizes.mjs'), '--all', 'src/cli/commands'], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
  assert.match(checker.stdout, /^FUNC src\/cli\/commands\/cache\.ts:\d+ registerCacheCommand \d+ \(reason given\)$/m);
});
