import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { REPOSITORY_ROOT } from './repository-paths.js';

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface LockedPackage {
  version?: string;
  optional?: boolean;
  engines?: { node?: string };
}

const manifest = JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };

/** The lowest Node.js version of each alternative of the engines range (`^20.19.0 || >=22.12.0` gives 20.19.0 and 22.12.0). */
const lowestVersions = manifest.engines.node.split('||').map((range) => semver.minVersion(range.trim())!.version);

test('every package the lockfile installs accepts the lowest Node.js of each range kforge claims (npm ci warns no EBADENGINE)', () => {
  const refused: string[] = [];
  for (const [name, locked] of Object.entries(lock.packages)) {
    // Optional packages are platform builds (wasm, other CPUs) that npm skips where they do not fit.
    if (name === '' || locked.optional || !locked.engines?.node) continue;
    for (const version of lowestVersions) {
      if (!semver.satisfies(version, locked.engines.node)) refused.push(`${name}@${locked.version} wants node ${locked.engines.node}, not ${version}`);
    }
  }
  assert.deepEqual(refused, []);
});

test('the Node.js running the tests is within the engines range', () => {
  assert.ok(semver.satisfies(process.versions.node, manifest.engines.node), `${process.versions.node} is outside ${manifest.engines.node}`);
});
