import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { COMPILE_CACHE_FOLDER, roleEnvironment, sandboxPolicy, workerLaunch } from './worker-sandbox.js';

const ROOT = '/srv/kforge-cache';

describe("the reference worker's torch.compile caches", () => {
  it('live under the cache root, which the candidate never sees', () => {
    const policy = sandboxPolicy({}, ROOT);
    assert.equal(policy.compileCache, path.join(ROOT, COMPILE_CACHE_FOLDER));
    assert.ok(policy.hiddenPaths.includes(ROOT));
    assert.ok(!policy.exposedPaths.some((folder) => policy.compileCache?.startsWith(folder)), 'nothing brings them back into view');
    const launch = workerLaunch({
      python: 'python3',
      workerDirectory: '/w',
      role: 'candidate',
      scratch: {
        path: '/s',
        inputDirectory: '/s/in',
        buildDirectory: '/s/build',
        homeDirectory: '/s/home',
        temporaryDirectory: '/s/tmp',
        remove: () => Promise.resolve(),
      },
      policy,
    });
    assert.equal(launch.args[launch.args.indexOf('--hide') + 1], ROOT);
  });

  it("reach the reference worker's environment and never the candidate's", () => {
    const policy = sandboxPolicy({}, ROOT);
    assert.deepEqual(roleEnvironment('reference', policy), {
      TORCHINDUCTOR_CACHE_DIR: path.join(ROOT, 'compile', 'inductor'),
      TRITON_CACHE_DIR: path.join(ROOT, 'compile', 'triton'),
    });
    assert.deepEqual(roleEnvironment('candidate', policy), {});
  });

  it("send a sandboxed candidate's profile to its scratch (its /tmp is private), and leave the others' where asked", () => {
    const scratch = { temporaryDirectory: '/s/tmp' };
    const asked = { KFORGE_WORKER_PROFILE: '/tmp/profiles' };
    assert.deepEqual(roleEnvironment('candidate', sandboxPolicy({}, ROOT), scratch, asked), { KFORGE_WORKER_PROFILE: '/s/tmp/kforge-profile' });
    assert.deepEqual(roleEnvironment('candidate', sandboxPolicy({ KFORGE_SANDBOX: 'off' }, ROOT), scratch, asked), {});
    assert.deepEqual(roleEnvironment('candidate', sandboxPolicy({}, ROOT), scratch, {}), {});
    assert.equal(roleEnvironment('reference', sandboxPolicy({}, ROOT), scratch, asked).KFORGE_WORKER_PROFILE, undefined);
  });

  it('are fresh per worker with the sandbox off (a candidate could write them) or KFORGE_COMPILE_CACHE=0', () => {
    for (const environment of [{ KFORGE_SANDBOX: '0' }, { KFORGE_COMPILE_CACHE: '0' }]) {
      const policy = sandboxPolicy(environment, ROOT);
      assert.equal(policy.compileCache, null, JSON.stringify(environment));
      assert.deepEqual(roleEnvironment('reference', policy), {});
    }
    assert.ok(sandboxPolicy({ KFORGE_SANDBOX: 'require', KFORGE_COMPILE_CACHE: '1' }, ROOT).compileCache);
  });
});
