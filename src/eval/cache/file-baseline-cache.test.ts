import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { baselineCacheKey, defaultBaselineCacheDirectory, type BaselineKeyMaterial } from './baseline-cache.js';
import { FileBaselineCache } from './file-baseline-cache.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

const material: BaselineKeyMaterial = {
  problem_sha256: 'a'.repeat(64),
  preset: 'cpu',
  precision: 'fp32',
  backend: 'cpu',
  device: 'cpu',
  torch: '1.13.0',
  cuda: null,
  driver: null,
  perf_trials: 100,
};

function entry(key: string) {
  return {
    key,
    key_material: material,
    measured_at: '2026-12-02T12:00:00.000Z',
    eager: { times_ms: [1, 2, 3] },
    compile: { error: 'torch 1.13 has no torch.compile' },
  };
}

describe('baseline cache', () => {
  it('keys on every field of the material', () => {
    const key = baselineCacheKey(material);
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(baselineCacheKey({ ...material }), key, 'the key is stable');
    for (const change of [
      { problem_sha256: 'b'.repeat(64) },
      { preset: 'gpu' as const },
      { precision: 'fp16' as const },
      { backend: 'cuda' as const },
      { device: 'NVIDIA H200' },
      { torch: '2.11.0' },
      { cuda: '13.0' },
      { driver: '580.1' },
      { perf_trials: 50 },
      { warmup_ms: 1000 },
    ]) {
      assert.notEqual(baselineCacheKey({ ...material, ...change }), key, `changing ${Object.keys(change)[0]} must change the key`);
    }
  });

  it('stores and reads back an entry, leaving no temporary file', async () => {
    const cache = new FileBaselineCache({ directory: path.join(root, 'a') });
    const key = baselineCacheKey(material);
    assert.equal(await cache.get(key), null);
    await cache.put(entry(key));
    assert.deepEqual(await cache.get(key), entry(key));
    assert.deepEqual(readdirSync(cache.directory), [`${key}.json`]);
  });

  it('ignores a corrupt file and replaces it on the next write', async () => {
    const cache = new FileBaselineCache({ directory: path.join(root, 'b') });
    const key = baselineCacheKey(material);
    await cache.put(entry(key));
    writeFileSync(path.join(cache.directory, `${key}.json`), '{"key": "trunc');
    assert.equal(await cache.get(key), null);
    writeFileSync(path.join(cache.directory, `${key}.json`), JSON.stringify({ ...entry(key), eager: { times_ms: 'fast' } }));
    assert.equal(await cache.get(key), null, 'a file that fails validation is absent too');
    await cache.put(entry(key));
    assert.deepEqual(await cache.get(key), entry(key));
  });

  it('defaults to .kforge/baselines under the working directory, or under KFORGE_CACHE_DIR', () => {
    assert.equal(defaultBaselineCacheDirectory({}, '/home/me/project'), '/home/me/project/.kforge/baselines');
    assert.equal(defaultBaselineCacheDirectory({ KFORGE_CACHE_DIR: '/var/cache/kforge' }, '/x'), '/var/cache/kforge/baselines');
  });
});
