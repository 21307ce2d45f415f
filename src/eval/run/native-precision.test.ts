import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PRECISIONS, precisionSchema } from '../../core/verdict.js';
import { baselineCacheKey, type BaselineKeyMaterial } from '../cache/baseline-cache.js';
import { deviceCeilings } from '../timing/device-ceilings.js';

describe('--precision native', () => {
  it('is a precision of its own, and fp64 is not one', () => {
    assert.deepEqual([...PRECISIONS], ['fp32', 'fp16', 'bf16', 'native']);
    assert.equal(precisionSchema.safeParse('fp64').success, false);
  });

  it('caches its baselines apart from fp32 ones (the problem runs in other dtypes)', () => {
    const material: BaselineKeyMaterial = {
      problem_sha256: 'ab',
      preset: 'gpu',
      precision: 'fp32',
      backend: 'cuda',
      device: 'NVIDIA H200',
      torch: '2.11.0',
      cuda: '12.8',
      driver: '570',
      perf_trials: 100,
    };
    assert.notEqual(baselineCacheKey({ ...material, precision: 'native' }), baselineCacheKey(material));
  });

  it("bounds speed of light by the device's fastest dense rate, since native may be fp8 or int8", () => {
    for (const device of ['NVIDIA H200', 'NVIDIA H100 80GB HBM3', 'NVIDIA H100 PCIe', 'NVIDIA A100-SXM4-80GB', 'NVIDIA L40S']) {
      const native = deviceCeilings(device, 'native')?.peak_flops_per_s ?? 0;
      for (const precision of ['fp32', 'fp16', 'bf16'] as const) {
        assert.ok(native >= (deviceCeilings(device, precision)?.peak_flops_per_s ?? Infinity), `${device}: native under ${precision}`);
      }
    }
  });
});
