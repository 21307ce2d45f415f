import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestName } from './closest-name.js';

describe('closestName', () => {
  it('finds a typo, a dropped or an extra letter', () => {
    assert.equal(closestName('file', ['openai', 'files', 'google']), 'files');
    assert.equal(closestName('antropic', ['openai', 'anthropic']), 'anthropic');
    assert.equal(closestName('refin', ['refine', 'sample', 'ideas']), 'refine');
    assert.equal(closestName('CUDA', ['cuda', 'triton', 'cpu']), 'cuda');
    assert.equal(closestName('fle', ['openai', 'files', 'google']), 'files');
    assert.equal(closestName('pytorc', ['kernelbench', 'own-kernels', 'strict', 'permissive', 'pytorch']), 'pytorch');
  });

  it('says nothing when no name is close', () => {
    assert.equal(closestName('pytorch-lightning', ['openai', 'files']), null);
    assert.equal(closestName('xy', ['cpu', 'cuda']), null);
    assert.equal(closestName('fp64', ['fp32', 'fp16', 'bf16', 'native']), null);
    assert.equal(closestName('rocm', ['cuda', 'triton', 'cpu']), null);
  });
});
