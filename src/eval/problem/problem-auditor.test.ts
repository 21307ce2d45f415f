import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { isProcessAlive, waitForDeath } from '../../../test-support/process-liveness.js';
import { auditProblemFile } from './problem-auditor.js';

const folder = mkdtempSync(path.join(tmpdir(), 'kforge-auditor-'));
after(() => rmSync(folder, { recursive: true, force: true }));

test('an audit past its limit is killed with everything it started, and says it timed out', { timeout: 60_000 }, async () => {
  // A stand-in for Python that starts a process of its own and then hangs.
  const pidFile = path.join(folder, 'child.pid');
  const python = path.join(folder, 'python');
  writeFileSync(python, `#!/bin/sh\nsleep 300 &\necho $! > "${pidFile}"\nwait\n`);
  chmodSync(python, 0o755);
  const problem = path.join(folder, 'problem.py');
  writeFileSync(problem, 'import torch\n');
  const audit = await auditProblemFile(problem, { python, workerDirectory: folder, environment: {}, capacityBytes: 0, timeoutMs: 1500, killGraceMs: 200 });
  assert.equal(audit.findings[0]?.check, 'audit-timeout');
  assert.match(audit.findings[0]?.message ?? '', /within its limit \(1\.5 s\).*\(raise --timeout\)$/);
  const child = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(child > 0);
  try {
    assert.ok(await waitForDeath(child, 5000), `the audit's own child (pid ${child}) outlived it`);
  } finally {
    if (isProcessAlive(child)) process.kill(child, 'SIGKILL');
  }
});
