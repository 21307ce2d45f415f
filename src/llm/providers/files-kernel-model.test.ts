import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { extractCandidate } from '../replies/extract-code.js';
import { FilesKernelModel } from './files-kernel-model.js';
import { ModelConfigurationError } from '../model-configuration-error.js';
import { ModelExhaustedError } from '../model-exhausted-error.js';

const messages = [{ role: 'user' as const, content: 'go' }];
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kforge-files-'));
  await writeFile(join(dir, '10-fast.py'), 'class ModelNew:\n    pass  # ten\n');
  await writeFile(join(dir, '2-first.py'), 'class ModelNew:\n    pass  # two\n');
  await writeFile(join(dir, '3-reply.md'), 'Recorded reply.\n```python\nclass ModelNew:\n    pass  # three\n```\n');
  await writeFile(join(dir, '4-ticks.py'), 'class ModelNew:\n    """```example```"""\n');
  await writeFile(join(dir, '.hidden.py'), 'class ModelNew:\n    pass  # hidden\n');
  await writeFile(join(dir, 'notes.json'), '{}');
  await mkdir(join(dir, 'sub.py'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('FilesKernelModel', () => {
  it('replays the folder in numeric name order, then is exhausted', async () => {
    const model = await FilesKernelModel.fromDirectory(dir);
    const codes: string[] = [];
    const sources: string[] = [];
    for (let index = 0; index < 4; index++) {
      const reply = await model.generate({ messages });
      assert.equal(reply.provider, 'files');
      assert.equal(reply.costUsd, 0);
      assert.deepEqual(reply.usage, { inputTokens: 0, outputTokens: 0 });
      const result = extractCandidate(reply.text);
      assert.ok('code' in result, reply.text);
      codes.push(result.code);
      sources.push(reply.sourceFile?.slice(dir.length + 1) ?? '');
    }
    assert.deepEqual(sources, ['2-first.py', '3-reply.md', '4-ticks.py', '10-fast.py']);
    assert.match(codes[0] ?? '', /# two/);
    assert.match(codes[1] ?? '', /# three/);
    assert.equal(codes[2], 'class ModelNew:\n    """```example```"""\n');
    assert.match(codes[3] ?? '', /# ten/);
    assert.equal(model.remaining(), 0);

    const error = await model.generate({ messages }).catch((thrown: unknown) => thrown);
    assert.ok(error instanceof ModelExhaustedError);
    assert.equal(error.isRetryable, false);
    assert.equal(error.repliesServed, 4);
  });

  it('wraps a .py file in a python fence and returns a .md file verbatim', async () => {
    const model = await FilesKernelModel.fromDirectory(dir, { modelId: 'hand-written' });
    const first = await model.generate({ messages });
    assert.equal(first.text, '```python\nclass ModelNew:\n    pass  # two\n```\n');
    assert.equal(first.modelId, 'hand-written');
    const second = await model.generate({ messages });
    assert.equal(second.text, 'Recorded reply.\n```python\nclass ModelNew:\n    pass  # three\n```\n');
  });

  it('refuses a missing folder and an empty one, naming --dir', async () => {
    const missing = await FilesKernelModel.fromDirectory(join(dir, 'nope')).catch((thrown: unknown) => thrown);
    assert.ok(missing instanceof ModelConfigurationError);
    assert.equal(missing.setting, '--dir');
    const empty = await mkdtemp(join(tmpdir(), 'kforge-empty-'));
    try {
      const error = await FilesKernelModel.fromDirectory(empty).catch((thrown: unknown) => thrown);
      assert.ok(error instanceof ModelConfigurationError);
      assert.match(error.message, /no candidate files/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('starts after the replies a resumed run already took (skip), and refuses a bad skip', async () => {
    const model = await FilesKernelModel.fromDirectory(dir, { skip: 2 });
    assert.equal(model.remaining(), 2);
    const reply = await model.generate({ messages });
    assert.equal(reply.sourceFile?.slice(dir.length + 1), '4-ticks.py');
    const past = await FilesKernelModel.fromDirectory(dir, { skip: 9 });
    assert.equal(past.remaining(), 0);
    const error = await past.generate({ messages }).catch((thrown: unknown) => thrown);
    assert.ok(error instanceof ModelExhaustedError);
    assert.equal(error.repliesServed, 4);
    await assert.rejects(FilesKernelModel.fromDirectory(dir, { skip: -1 }), RangeError);
  });

  it('honours an aborted signal', async () => {
    const model = await FilesKernelModel.fromDirectory(dir);
    await assert.rejects(model.generate({ messages, signal: AbortSignal.abort() }));
    assert.equal(model.remaining(), 4);
  });
});

describe('FilesKernelModel over links', () => {
  it('serves a link to a file like the file itself, and skips a link to a folder', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'kforge-files-links-'));
    try {
      await writeFile(join(folder, 'shipped.py'), 'class ModelNew:\n    pass  # shipped\n');
      await mkdir(join(folder, 'replies'));
      await mkdir(join(folder, 'elsewhere.py'));
      await writeFile(join(folder, 'replies', '1-own.py'), 'class ModelNew:\n    pass  # own\n');
      await symlink(join(folder, 'shipped.py'), join(folder, 'replies', '2-linked.py'));
      await symlink(join(folder, 'elsewhere.py'), join(folder, 'replies', '3-folder.py'));
      const model = await FilesKernelModel.fromDirectory(join(folder, 'replies'));
      const first = await model.generate({ messages: [{ role: 'user', content: 'go' }] });
      const second = await model.generate({ messages: [{ role: 'user', content: 'go' }] });
      assert.match(first.text, /# own/);
      assert.match(second.text, /# shipped/);
      await assert.rejects(model.generate({ messages: [{ role: 'user', content: 'go' }] }), ModelExhaustedError);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
