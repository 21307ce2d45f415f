import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestName } from './closest-name.js';

describe('closestName', () => {
  it('finds a typo, a dropped or an extra letter', () => {
    assert.equal(closestName('file', ['openai', 'files', 'google']), 'files');
    assert.equal(closestName('antropic', ['openai', 'anthropic']), 'anthropic');
    assert.equal(closestName('refin', ['refine', 'sample', 'ideas']), 'refine');
    assert.equal(closestName('CUDA', ['cuda', 'triton', 'cpu']), 'cuda');
  });

  it('says nothing when no name is close', () => {
    assert.equal(closestName('pytorch-lightning', ['openai', 'files']), null);
    assert.equal(closestName('xy', ['cpu', 'cuda']), null);
  });
});
