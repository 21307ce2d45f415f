import assert from 'node:assert/strict';
import { test } from 'node:test';
import { docstringSummary, presetNames } from './problem-catalog.js';

test('preset names are the top-level keys of KFORGE_PRESETS, read as text', () => {
  const source = 'N = 4\nKFORGE_PRESETS = {\n    "cpu": {"batch_size": 8, "dim": {"x": 1}},\n    \'gpu\': {"batch_size": 4096},\n}\n';
  assert.deepEqual(presetNames(source), ['cpu', 'gpu']);
  assert.deepEqual(presetNames('import torch\nbatch_size = 16\n'), [], 'a KernelBench file has none');
  assert.deepEqual(presetNames('# KFORGE_PRESETS = {"cpu": {}}\n'), [], 'a comment is not a definition');
});

test('the summary is the first line of the module docstring', () => {
  assert.equal(docstringSummary('"""ReLU, elementwise.\n\nMore.\n"""\nimport torch\n'), 'ReLU, elementwise.');
  assert.equal(docstringSummary("# header\n'''One line.'''\n"), 'One line.');
  assert.equal(docstringSummary('import torch\n'), '');
});
