import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModelConfigurationError } from '../model-configuration-error.js';
import { ModelExhaustedError } from '../model-exhausted-error.js';
import { PerProblemFilesKernelModel } from './per-problem-files-kernel-model.js';

const messages = [{ role: 'user' as const, content: 'go' }];
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kforge-per-problem-'));
  await mkdir(join(dir, '02_gelu'));
  await mkdir(join(dir, '03_empty'));
  for (const name of ['1.py', '2.py', '3.py']) await writeFile(join(dir, name), `class ModelNew: pass  # shared ${name}\n`);
  for (const name of ['1.py', '2.py']) await writeFile(join(dir, '02_gelu', name), `class ModelNew: pass  # gelu ${name}\n`);
});
after(() => rm(dir, { recursive: true, force: true }));

/** `folder/file` of a reply, relative to the replies folder. */
async function next(model: PerProblemFilesKernelModel): Promise<string> {
  const reply = await model.generate({ messages });
  const file = reply.sourceFile ?? '';
  return file.slice(dir.length + 1) || basename(file);
}

describe('PerProblemFilesKernelModel', () => {
  it('serves a problem from its subfolder and the others from the folder itself, one after another', async () => {
    const model = await PerProblemFilesKernelModel.fromDirectory(dir, {
      problems: [{ name: '01_relu' }, { name: '02_gelu' }, { name: '04_sum' }],
      modelId: 'replays',
    });
    assert.deepEqual(model.describe(), { provider: 'files', modelId: 'replays' });
    assert.equal(model.folderOf('02_gelu'), join(dir, '02_gelu'));
    assert.equal(model.folderOf('02_gelu-1a2b3c4d'), join(dir, '02_gelu'), 'a stem the run made unique finds its folder');
    assert.equal(model.folderOf('01_relu'), dir);
    model.select('01_relu');
    assert.equal(await next(model), '1.py');
    model.select('02_gelu');
    assert.deepEqual([await next(model), await next(model)], ['02_gelu/1.py', '02_gelu/2.py']);
    await assert.rejects(model.generate({ messages }), ModelExhaustedError);
    model.select('04_sum');
    assert.deepEqual([await next(model), await next(model)], ['2.py', '3.py'], 'the shared folder continues where 01_relu left it');
  });

  it('resumes each folder past the replies its problems took', async () => {
    const model = await PerProblemFilesKernelModel.fromDirectory(dir, {
      problems: [
        { name: '01_relu', repliesServed: 1 },
        { name: '02_gelu', repliesServed: 1 },
        { name: '04_sum', repliesServed: 1 },
      ],
    });
    model.select('02_gelu');
    assert.equal(await next(model), '02_gelu/2.py');
    model.select('01_relu');
    assert.equal(await next(model), '3.py', 'two of the shared replies were taken, by 01_relu and 04_sum');
    assert.equal(model.remaining(), 0);
  });

  it('refuses a problem with no replies anywhere, and an empty subfolder, naming --dir', async () => {
    const only = await mkdtemp(join(tmpdir(), 'kforge-per-problem-only-'));
    try {
      await mkdir(join(only, '02_gelu'));
      await writeFile(join(only, '02_gelu', '1.py'), 'class ModelNew: pass\n');
      const error = await PerProblemFilesKernelModel.fromDirectory(only, { problems: [{ name: '01_relu' }, { name: '02_gelu' }] }).catch(
        (thrown: unknown) => thrown,
      );
      assert.ok(error instanceof ModelConfigurationError);
      assert.equal(error.setting, '--dir');
      assert.match(error.message, /no replies for 01_relu: .* has no subfolder named after it/);
    } finally {
      await rm(only, { recursive: true, force: true });
    }
    const empty = await PerProblemFilesKernelModel.fromDirectory(dir, { problems: [{ name: '03_empty' }] }).catch((thrown: unknown) => thrown);
    assert.ok(empty instanceof ModelConfigurationError);
    assert.match(empty.message, /03_empty holds no candidate files/);
  });
});
