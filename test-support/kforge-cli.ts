import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from './fixture-paths.js';

/**
 * The real `kforge` command (bin/kforge.js, the built CLI) run with the fake worker of
 * test-support/fixtures/fake-worker acting both roles (no torch needed), in `root`, whose folder
 * is also its temporary directory: every such process of a test shares one host's device locks
 * and budgets there. `environment` adds to (or replaces) those variables.
 */
export function kforgeWithFakeWorker(root: string, args: readonly string[], environment: Record<string, string>): ResultPromise<{ reject: false }> {
  return execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), ...args], {
    reject: false,
    cwd: root,
    timeout: 120_000,
    env: { KFORGE_WORKER_DIR: fixturePath('fake-worker'), KFORGE_PYTHON: TEST_PYTHON, TMPDIR: root, NO_COLOR: '1', ...environment },
  });
}
