import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BaselineCache, CachedBaselines } from './baseline-cache.js';
import { SharedBaselineCache } from './shared-baseline-cache.js';

const KEY = 'f'.repeat(64);

function entry(times: number[]): CachedBaselines {
  return {
    key: KEY,
    key_material: {
      problem_sha256: 'p',
      preset: 'cpu',
      precision: 'fp32',
      backend: 'cpu',
      device: 'cpu: Test',
      torch: '1.13.0',
      cuda: null,
      driver: null,
      perf_trials: 3,
    },
    measured_at: '2026-12-02T00:00:00.000Z',
    eager: { times_ms: times },
    compile: { error: 'torch 1.13 has no torch.compile' },
  };
}

/** A BaselineCache in memory that counts its calls. */
function memoryCache(initial: CachedBaselines | null = null): BaselineCache & { gets: number; puts: number } {
  let stored = initial;
  return {
    gets: 0,
    puts: 0,
    async get(key) {
      this.gets += 1;
      return stored && stored.key === key ? stored : null;
    },
    async put(value) {
      this.puts += 1;
      stored = value;
    },
  };
}

describe('SharedBaselineCache', () => {
  it('lets one of many concurrent evaluations measure a missing key; the others wait and reuse it', async () => {
    const inner = memoryCache();
    const shared = new SharedBaselineCache(inner);
    const views = Array.from({ length: 5 }, () => shared.view());
    const lookups = views.map((view) => view.get(KEY));
    const first = await lookups[0];
    assert.equal(first, null, 'the first one measures');
    await views[0]!.put(entry([1, 2, 3]));
    const others = await Promise.all(lookups.slice(1));
    assert.ok(others.every((value) => value?.eager && 'times_ms' in value.eager && value.eager.times_ms[0] === 1));
    assert.equal(inner.puts, 1);
    assert.equal(inner.gets, 1, 'the stored copy was read once');
  });

  it('passes the measurement on when the measuring evaluation ends without one', async () => {
    const shared = new SharedBaselineCache(memoryCache());
    const [first, second] = [shared.view(), shared.view()];
    assert.equal(await first.get(KEY), null);
    const waiting = second.get(KEY);
    first.release();
    assert.equal(await waiting, null, 'the waiter measures instead');
    await second.put(entry([4]));
    assert.ok(await shared.view().get(KEY));
  });

  it('refreshes a stored key once per process with `refresh`, then reuses the fresh one', async () => {
    const inner = memoryCache(entry([9]));
    const shared = new SharedBaselineCache(inner);
    const refreshing = shared.view({ refresh: true });
    assert.equal(await refreshing.get(KEY), null, 'the stored baseline is not used');
    const alsoRefreshing = shared.view({ refresh: true }).get(KEY);
    await refreshing.put(entry([5]));
    const reused = await alsoRefreshing;
    assert.ok(reused?.eager && 'times_ms' in reused.eager && reused.eager.times_ms[0] === 5, 'the second refreshing view reuses the fresh measurement');
    assert.equal(inner.puts, 1);
  });
});
