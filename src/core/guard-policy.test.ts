import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPOSITORY_ROOT } from '../../test-support/fixture-paths.js';
import {
  ACCEPTED_GUARD_POLICY_NAMES,
  DEFAULT_GUARD_POLICY,
  effectiveGuardPolicy,
  GUARD_POLICIES,
  GUARD_POLICY_ALIASES,
  guardPolicyNameSchema,
  POLICIES_REJECTING_PYTORCH,
  POLICIES_WITHOUT_OWN_WORK_RULE,
  resolveGuardPolicy,
} from './guard-policy.js';

const PYTHON = process.env.KFORGE_PYTHON ?? '/usr/bin/python3';

/** The worker's own definition (worker/kforge_worker/guard/policy.py), read by running it. */
function workerPolicies(): { names: string[]; default: string; aliases: Record<string, string>; rejecting: string[]; ownWorkNoted: string[] } {
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(path.join(REPOSITORY_ROOT, 'worker'))})`,
    'from kforge_worker.guard import policy',
    'names = policy.policy_names()',
    'rejecting = [name for name in names if policy.rejects_pytorch_compute(policy.load_policy(name))]',
    'noted = [name for name in names if not policy.requires_own_work(policy.load_policy(name))]',
    'print(json.dumps({"names": names, "default": policy.DEFAULT_POLICY, "aliases": policy.POLICY_ALIASES, "rejecting": rejecting, "ownWorkNoted": noted}))',
  ].join('\n');
  const run = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as ReturnType<typeof workerPolicies>;
}

test('the policy names, default, aliases, PyTorch-rejecting and own-work-waiving policies agree with the worker', () => {
  const worker = workerPolicies();
  assert.deepEqual([...GUARD_POLICIES], worker.names);
  assert.equal(DEFAULT_GUARD_POLICY, worker.default);
  assert.deepEqual({ ...GUARD_POLICY_ALIASES }, worker.aliases);
  assert.deepEqual([...POLICIES_REJECTING_PYTORCH], worker.rejecting);
  assert.deepEqual([...POLICIES_WITHOUT_OWN_WORK_RULE], worker.ownWorkNoted);
  assert.deepEqual(
    [...POLICIES_WITHOUT_OWN_WORK_RULE],
    ['pytorch'],
    'docs/spec.md section 8: every other policy rejects a candidate whose own kernel did not run',
  );
});

/**
 * Where worker/ defines `POLICY_NAMES = (...)`, found by searching (the worker's modules may move
 * between subpackages), and the names in it, read from the text without importing the worker.
 */
function workerPolicyNames(): { file: string; names: string[] } {
  const definitions: Array<{ file: string; names: string[] }> = [];
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory() && entry.name !== '__pycache__' && entry.name !== 'tests') visit(full);
      else if (entry.isFile() && entry.name.endsWith('.py')) {
        const match = /^POLICY_NAMES\s*(?::[^=]+)?=\s*[([]([^)\]]*)[)\]]/m.exec(readFileSync(full, 'utf8'));
        if (match)
          definitions.push({ file: path.relative(REPOSITORY_ROOT, full), names: [...match[1]!.matchAll(/["']([^"']+)["']/g)].map((name) => name[1]!) });
      }
    }
  };
  visit(path.join(REPOSITORY_ROOT, 'worker'));
  assert.equal(
    definitions.length,
    1,
    `expected one \`POLICY_NAMES =\` under worker/, found ${JSON.stringify(definitions.map((definition) => definition.file))}`,
  );
  return definitions[0]!;
}

test("GUARD_POLICIES is the worker's POLICY_NAMES, read from its source", () => {
  const { file, names } = workerPolicyNames();
  assert.deepEqual([...GUARD_POLICIES], names, `GUARD_POLICIES (src/core/guard-policies.ts) and POLICY_NAMES (${file}) differ`);
});

test('an alias resolves to the policy it now means, an unknown name to nothing', () => {
  assert.equal(resolveGuardPolicy('default'), 'own-kernels');
  assert.equal(resolveGuardPolicy('kernelbench'), 'kernelbench');
  assert.equal(resolveGuardPolicy('lenient'), undefined);
  assert.equal(effectiveGuardPolicy(undefined), 'kernelbench');
  assert.equal(effectiveGuardPolicy('default'), 'own-kernels');
  assert.deepEqual(ACCEPTED_GUARD_POLICY_NAMES, ['kernelbench', 'own-kernels', 'strict', 'permissive', 'pytorch', 'default']);
});

test('a bad policy name is refused with the choices and the value', () => {
  const parsed = guardPolicyNameSchema('--guard-policy').safeParse('lenient');
  assert.equal(parsed.success, false);
  assert.equal(parsed.error?.issues[0]?.message, 'expected `--guard-policy` to be one of kernelbench, own-kernels, strict, permissive, pytorch, got "lenient"');
});
