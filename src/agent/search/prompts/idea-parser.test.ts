import assert from 'node:assert/strict';
import { test } from 'node:test';
import { labelFrom, parseIdeas } from './idea-parser.js';

test('ideas are read from the JSON the prompt asks for, capped and with unique labels', () => {
  const reply =
    'Some thoughts.\n```json\n[{"label": "omp", "idea": "parallelise rows"}, {"label": "omp", "idea": "parallelise columns"}, {"idea": "fuse the two passes"}, "tile by 64"]\n```';
  assert.deepEqual(parseIdeas(reply, 3), [
    { label: 'omp', text: 'parallelise rows' },
    { label: 'omp-2', text: 'parallelise columns' },
    { label: 'fuse-the-two-passes', text: 'fuse the two passes' },
  ]);
});

test('a numbered or bulleted list is the fallback; a reply without ideas gives none', () => {
  assert.deepEqual(parseIdeas('1. **Vectorise**: use AVX2 for the exp\n2) Block rows so a row stays in L1\n- something else', 5), [
    { label: 'vectorise', text: 'use AVX2 for the exp' },
    { label: 'block-rows-so-a-row', text: 'Block rows so a row stays in L1' },
    { label: 'something-else', text: 'something else' },
  ]);
  assert.deepEqual(parseIdeas('No ideas today.', 3), []);
  assert.equal(labelFrom('Use shared-memory tiling (64x64)!'), 'use-shared-memory-tiling-64x64');
});
