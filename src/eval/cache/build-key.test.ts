import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildKey, buildKeyMaterialOf, type BuildKeyInputs, type BuildKeyMaterial } from './build-key.js';

const SOURCE = 'a'.repeat(64);

function inputs(overrides: Partial<BuildKeyInputs> = {}): BuildKeyInputs {
  return {
    sourceSha256: SOURCE,
    backend: 'cuda',
    environment: {
      device: 'NVIDIA H200',
      torch: '2.11.0',
      cuda: '13.0',
      driver: '580.1',
      python: '3.12.3',
      capability: '9.0',
      cpu: 'AMD EPYC 9654',
      nvcc: '13.0.48',
    },
    compiler: 'c++: c++ (GCC) 13.3.0',
    parentEnvironment: {},
    ...overrides,
  };
}

describe('build keys', () => {
  it('are stable: the same inputs give the same 64-hex key, whatever the field order', () => {
    const material = buildKeyMaterialOf(inputs());
    const key = buildKey(material);
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(buildKey(buildKeyMaterialOf(inputs())), key);
    const reordered = Object.fromEntries(Object.entries(material).reverse()) as BuildKeyMaterial;
    assert.equal(buildKey(reordered), key);
    // The driver and the GPU's marketing name do not change what is compiled.
    assert.equal(buildKey(buildKeyMaterialOf(inputs({ environment: { ...inputs().environment, driver: '590.0', device: 'NVIDIA H200 NVL' } }))), key);
  });

  it('change with the source, backend, torch, CUDA, capability, Python, host CPU, compilers and arch list', () => {
    const base = buildKey(buildKeyMaterialOf(inputs()));
    const environment = inputs().environment;
    const variants: Array<[string, Partial<BuildKeyInputs>]> = [
      ['source', { sourceSha256: 'b'.repeat(64) }],
      ['backend', { backend: 'triton' }],
      ['torch', { environment: { ...environment, torch: '2.10.0' } }],
      ['cuda', { environment: { ...environment, cuda: '12.8' } }],
      ['capability', { environment: { ...environment, capability: '8.0' } }],
      ['python', { environment: { ...environment, python: '3.11.2' } }],
      ['host cpu', { environment: { ...environment, cpu: 'Intel Xeon' } }],
      ['nvcc', { environment: { ...environment, nvcc: '12.8.93' } }],
      ['compiler', { compiler: 'clang++: clang version 18' }],
      ['arch list', { parentEnvironment: { TORCH_CUDA_ARCH_LIST: '9.0' } }],
    ];
    const keys = new Set([base]);
    for (const [what, overrides] of variants) {
      const key = buildKey(buildKeyMaterialOf(inputs(overrides)));
      assert.notEqual(key, base, `${what} must change the key`);
      keys.add(key);
    }
    assert.equal(keys.size, variants.length + 1, 'every variant has its own key');
  });

  it('ignore the GPU on the cpu backend (a CPU build does not depend on it)', () => {
    const cpu = (environment: Partial<BuildKeyInputs['environment']>) =>
      buildKey(
        buildKeyMaterialOf(
          inputs({ backend: 'cpu', environment: { ...inputs().environment, ...environment }, parentEnvironment: { TORCH_CUDA_ARCH_LIST: '9.0' } }),
        ),
      );
    assert.equal(cpu({ capability: '8.0', nvcc: '12.0' }), cpu({ capability: null, nvcc: null }));
    assert.notEqual(cpu({}), buildKey(buildKeyMaterialOf(inputs())));
  });

  it('reject material that is not a SHA-256 source digest', () => {
    assert.throws(() => buildKeyMaterialOf(inputs({ sourceSha256: 'not-a-digest' })), /SHA-256/);
  });
});
