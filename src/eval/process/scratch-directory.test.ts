import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createScratchDirectory, PROFILE_FALLBACK } from './scratch-directory.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-scratch-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('scratch directories', () => {
  it("copy a sandboxed worker's profile out before removal, and nothing but its plain files", async () => {
    const profiles = path.join(root, 'profiles');
    const secret = path.join(root, 'secret.txt');
    writeFileSync(secret, 'not a profile');
    const scratch = await createScratchDirectory({ root, profileDirectory: profiles });
    const fallback = path.join(scratch.temporaryDirectory, PROFILE_FALLBACK);
    mkdirSync(fallback);
    writeFileSync(path.join(fallback, 'candidate-41.stacks'), 'correctness;run 3\n');
    writeFileSync(path.join(fallback, 'candidate-41-01-correctness.pickle'), 'snapshot');
    symlinkSync(secret, path.join(fallback, 'candidate-42.stacks'));
    mkdirSync(path.join(fallback, 'a-folder'));
    await scratch.remove();
    assert.equal(existsSync(scratch.path), false, 'the scratch directory is left');
    assert.deepEqual(readdirSync(profiles).sort(), ['candidate-41-01-correctness.pickle', 'candidate-41.stacks']);
    assert.equal(readFileSync(path.join(profiles, 'candidate-41.stacks'), 'utf8'), 'correctness;run 3\n');
  });

  it('copy nothing where no profile was asked for', async () => {
    const scratch = await createScratchDirectory({ root });
    mkdirSync(path.join(scratch.temporaryDirectory, PROFILE_FALLBACK));
    writeFileSync(path.join(scratch.temporaryDirectory, PROFILE_FALLBACK, 'reference-1.stacks'), 'x 1\n');
    await scratch.remove();
    assert.equal(existsSync(scratch.path), false);
    assert.deepEqual(
      readdirSync(root).filter((name) => name !== 'profiles' && name !== 'secret.txt'),
      [],
      'a profile was copied somewhere without being asked for',
    );
  });
});
