import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { holdsProblemFolder, problemFolderOf, problemStem, shapeLabel } from './problem-folder.js';
import { createProblemFolderReader } from './problem-folder-reader.js';

const FOLDER = fixturePath('problem-folders', 'scale-shift');
const SINGLE = path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py');

const scratch = await mkdtemp(path.join(os.tmpdir(), 'kforge-problem-folder-'));
after(() => rm(scratch, { recursive: true, force: true }));

describe('problem folders on the file system', () => {
  it('a folder, or a reference.py with shapes.py or problem.yaml beside it, is a problem folder; other files are not', async () => {
    assert.equal(await problemFolderOf(FOLDER), FOLDER);
    assert.equal(await problemFolderOf(path.join(FOLDER, 'reference.py')), FOLDER);
    assert.equal(await problemFolderOf(SINGLE), null);
    assert.equal(await problemFolderOf(path.join(scratch, 'missing')), null);
    const lone = path.join(scratch, 'lone');
    await cp(path.join(FOLDER, 'reference.py'), path.join(lone, 'reference.py'), { recursive: true });
    assert.equal(await problemFolderOf(path.join(lone, 'reference.py')), null, 'a reference.py alone is a single-file problem');
    assert.equal(await holdsProblemFolder(lone), false);
    assert.equal(await holdsProblemFolder(FOLDER), true);
  });

  it("a problem folder's reference.py is named by its folder", async () => {
    assert.equal(await problemStem(path.join(FOLDER, 'reference.py')), 'scale-shift');
    assert.equal(await problemStem(SINGLE), '02_gelu');
  });

  it('a shape reads as shapes.py writes it', () => {
    assert.equal(shapeLabel({ index: 2, values: { M: 32, N: 8192, extreme: true } }), 'shape 2 (M=32, N=8192, extreme=true)');
  });
});

describe('createProblemFolderReader: the worker reads the folder', () => {
  const reader = () => createProblemFolderReader({ python: TEST_PYTHON, workerDirectory: WORKER_DIRECTORY, environment: process.env });

  it('gives the shapes, the constants each sets, the keys none takes, and problem.yaml', async () => {
    const reading = await reader()(FOLDER);
    assert.equal(reading.kind, 'folder');
    assert.ok(reading.kind === 'folder');
    assert.equal(reading.folder.reference, path.join(FOLDER, 'reference.py'));
    assert.equal(reading.folder.name, 'scale_shift');
    assert.deepEqual(
      reading.folder.shapes.map((shape) => [shape.index, shape.overrides, shape.unused]),
      [
        [0, { ROWS: 8, COLS: 64 }, []],
        [1, { ROWS: 16, COLS: 128 }, []],
        [2, { ROWS: 4, COLS: 300 }, ['wide']],
      ],
    );
    assert.deepEqual(reading.folder.forbidden, ['torch.addcmul']);
  });

  it('runs nothing for a single-file problem', async () => {
    const noPython = createProblemFolderReader({ python: path.join(scratch, 'no-python'), workerDirectory: WORKER_DIRECTORY, environment: process.env });
    assert.deepEqual(await noPython(SINGLE), { kind: 'file' });
  });

  it("an unusable folder is `invalid` with the worker's message; once fixed, it is read again", async () => {
    const folder = path.join(scratch, 'broken');
    await cp(FOLDER, folder, { recursive: true });
    await writeFile(path.join(folder, 'shapes.py'), 'SHAPES = []\n');
    const read = reader();
    const broken = await read(folder);
    assert.deepEqual(broken, {
      kind: 'invalid',
      check: 'problem-load',
      message: `${path.join(folder, 'shapes.py')} must define SHAPES, a non-empty list of dicts such as [{'M': 4096, 'N': 4096}]`,
    });
    await writeFile(path.join(folder, 'shapes.py'), 'SHAPES = [{"rows": 2, "cols": 3}]\n');
    const later = new Date(Date.now() + 5000);
    await utimes(path.join(folder, 'shapes.py'), later, later);
    const fixed = await read(folder);
    assert.ok(fixed.kind === 'folder', JSON.stringify(fixed));
    assert.deepEqual(fixed.folder.shapes[0]?.overrides, { ROWS: 2, COLS: 3 });
  });

  it('a worker that cannot run is the machine, not the problem: EvaluatorSetupError', async () => {
    const noWorker = createProblemFolderReader({ python: TEST_PYTHON, workerDirectory: path.join(scratch, 'no-worker'), environment: process.env });
    await assert.rejects(noWorker(FOLDER), (error: unknown) => error instanceof EvaluatorSetupError && /could not read the problem folder/.test(error.message));
  });
});
