import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractCandidate, isExtractionFailure, type CandidateExtraction } from './extract-code.js';
import { findFencedBlocks } from './fenced-blocks.js';

// Reply texts below are hand-written in the shapes models produce; none is a model's output.

const MODEL_NEW = `import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    auto* in = x.data_ptr<float>();
    auto* out = y.data_ptr<float>();
    #pragma omp parallel for
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0 ? in[i] : 0;
    return y;
}
"""

relu = load_inline(name="relu", cpp_sources=cpp_source, functions=["relu_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu.relu_forward(x)
`;

function code(result: CandidateExtraction): string {
  if (isExtractionFailure(result)) assert.fail(`expected code, got ${result.error}: ${result.message}`);
  return result.code;
}

describe('extractCandidate', () => {
  it('takes a ```python block out of prose', () => {
    const reply = `I'll fuse the ReLU into a single pass with OpenMP.\n\n\`\`\`python\n${MODEL_NEW}\`\`\`\n\nThis avoids an extra allocation.`;
    const result = extractCandidate(reply);
    assert.deepEqual(result, { code: MODEL_NEW, language: 'python', from: 'fenced-block', blockCount: 1 });
  });

  it('accepts ```py, untagged ``` and ~~~ fences, and info strings with attributes', () => {
    for (const [open, close] of [
      ['```py', '```'],
      ['```', '```'],
      ['~~~python', '~~~'],
      ['```python title="model_new.py"', '```'],
      ['```Python3', '```'],
      ['````python', '````'],
    ] as const) {
      assert.equal(code(extractCandidate(`Here:\n${open}\n${MODEL_NEW}${close}\n`)), MODEL_NEW, open);
    }
  });

  it('handles CRLF line endings', () => {
    const reply = `Answer:\r\n\`\`\`python\r\n${MODEL_NEW.replace(/\n/g, '\r\n')}\`\`\`\r\n`;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW);
  });

  it('removes the indentation of an indented fence (inside a list item)', () => {
    const indented = MODEL_NEW.split('\n')
      .map((line) => (line ? `   ${line}` : line))
      .join('\n');
    const reply = `1. The final version:\n   \`\`\`python\n${indented}   \`\`\`\n`;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW);
  });

  it('prefers the block defining ModelNew over helper and test blocks', () => {
    const reply = [
      'First, a quick check of the reference:',
      '```python\nimport torch\nx = torch.randn(4)\nprint(torch.relu(x))\n```',
      'Now the optimized model:',
      `\`\`\`python\n${MODEL_NEW}\`\`\``,
      'Run it with:',
      '```bash\npython bench.py --trials 100\n```',
    ].join('\n');
    const result = extractCandidate(reply);
    assert.equal(code(result), MODEL_NEW);
    assert.equal((result as { blockCount: number }).blockCount, 3);
  });

  it('takes the last complete ModelNew block when the model revises itself', () => {
    const first = MODEL_NEW.replace('relu_forward(x)', 'relu_forward(x.contiguous())');
    const reply = `Draft:\n\`\`\`python\n${first}\`\`\`\nWait, contiguous() is not needed here. Final:\n\`\`\`python\n${MODEL_NEW}\`\`\``;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW);
  });

  it('picks the Python block with ModelNew when the CUDA source sits in its own block', () => {
    const python = MODEL_NEW.replace(/cpp_source = """[\s\S]*?"""/, 'cpp_source = CUDA_SOURCE  # see the block above');
    const reply = `The kernel:\n\`\`\`cuda\n__global__ void relu(const float* x, float* y, int n) {}\n\`\`\`\nThe module:\n\`\`\`python\n${python}\`\`\``;
    const result = extractCandidate(reply);
    assert.equal(code(result), python);
    assert.equal((result as { language: string }).language, 'python');
  });

  it('ignores a C++ class named ModelNew', () => {
    const reply = '```cpp\nclass ModelNew : public torch::nn::Module {\n};\n```';
    const result = extractCandidate(reply);
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'no-model-new');
  });

  it('uses a mislabelled block when it is the only one defining ModelNew', () => {
    const result = extractCandidate(`\`\`\`cuda\n${MODEL_NEW}\`\`\``);
    assert.equal(code(result), MODEL_NEW);
    assert.equal((result as { language: string }).language, 'cuda');
  });

  it('uses an unterminated final fence (a reply cut off by the token limit)', () => {
    const truncated = MODEL_NEW.slice(0, MODEL_NEW.indexOf('return relu'));
    const result = extractCandidate(`Here is the kernel:\n\`\`\`python\n${truncated}`);
    assert.equal((result as { from: string }).from, 'unterminated-fence');
    assert.match(code(result), /class ModelNew/);
  });

  it('prefers a complete block over a later truncated one', () => {
    const truncated = MODEL_NEW.slice(0, MODEL_NEW.indexOf('def forward'));
    const result = extractCandidate(`\`\`\`python\n${MODEL_NEW}\`\`\`\nImproved:\n\`\`\`python\n${truncated}`);
    assert.equal(code(result), MODEL_NEW);
    assert.equal((result as { from: string }).from, 'fenced-block');
  });

  it('accepts a bare code reply without fences, dropping a leading sentence', () => {
    const result = extractCandidate(`Sure! Here is the code.\n${MODEL_NEW}`);
    assert.deepEqual(result, { code: MODEL_NEW, language: null, from: 'bare-reply', blockCount: 0 });
  });

  it('ignores code inside <think> sections', () => {
    const reply = `<think>\nMaybe:\n\`\`\`python\nclass ModelNew(nn.Module):\n    pass\n\`\`\`\nNo, use OpenMP.\n</think>\n\`\`\`python\n${MODEL_NEW}\`\`\``;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW);
  });

  it('handles a reply whose opening <think> tag was stripped by the server', () => {
    const reply = `thinking about tiling...\n</think>\n\n\`\`\`python\n${MODEL_NEW}\`\`\``;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW);
  });

  it('reports a reply that ended inside its thinking', () => {
    const result = extractCandidate('<think>\nLet me consider the memory layout of\n```python\nclass ModelNew(nn.Module):');
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'empty-reply');
    assert.match(result.message, /thinking/);
  });

  it('reports an empty reply', () => {
    const result = extractCandidate('   \n');
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'empty-reply');
  });

  it('reports prose without code, with a message to feed back', () => {
    const result = extractCandidate('The reference implementation is already optimal; I would not change it.');
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'no-code');
    assert.match(result.message, /```python/);
    assert.match(result.message, /class ModelNew/);
  });

  it('reports code blocks that define neither ModelNew nor a Model of their own, naming both', () => {
    const result = extractCandidate('```python\nimport torch\n\ndef fused(x):\n    return x\n```\n```cpp\nclass Model : public Base {};\n```');
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'no-model-new');
    assert.equal(result.blockCount, 2);
    assert.match(result.message, /python, cpp/);
    assert.match(result.message, /none defines `class ModelNew` \(nor a `class Model` of its own/);
  });

  it('reports bare code without ModelNew or Model as no-model-new, naming both', () => {
    const result = extractCandidate('import torch\n\ndef fused(x):\n    return x\n');
    assert.ok(isExtractionFailure(result));
    assert.equal(result.error, 'no-model-new');
    assert.match(result.message, /does not define `class ModelNew` \(nor a `class Model` of its own/);
  });

  // The worker takes a file's own `class Model` as its candidate, and `ModelNew = Model` as naming
  // it (worker/kforge_worker/build/build.py): KernelBench-Hard's solutions are written so.
  const OWN_MODEL = MODEL_NEW.replace('class ModelNew(nn.Module):', 'class Model(nn.Module):');

  it('accepts a block whose own class Model is the candidate, as the worker does', () => {
    const result = extractCandidate(`Here is the kernel:\n\`\`\`python\n${OWN_MODEL}\`\`\`\n`);
    assert.equal(code(result), OWN_MODEL);
    assert.equal((result as { from: string }).from, 'fenced-block');
    assert.equal(code(extractCandidate(OWN_MODEL)), OWN_MODEL, 'a bare reply too');
  });

  it('accepts ModelNew = Model, and a ModelNew block over a block that quotes the reference Model', () => {
    const aliased = `${OWN_MODEL}\n\nModelNew = Model\n`;
    assert.equal(code(extractCandidate(`\`\`\`python\n${aliased}\`\`\``)), aliased);
    const annotated = `${OWN_MODEL}\nModelNew: type = Model  # the harness's name\n`;
    assert.equal(code(extractCandidate(`\`\`\`python\n${annotated}\`\`\``)), annotated);
    const reference = 'import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n';
    const reply = `The reference:\n\`\`\`python\n${reference}\`\`\`\nMy version:\n\`\`\`python\n${MODEL_NEW}\`\`\`\nAs the reference again:\n\`\`\`python\n${reference}\`\`\``;
    assert.equal(code(extractCandidate(reply)), MODEL_NEW, 'ModelNew wins over a later quoted Model');
  });

  it('skips empty blocks', () => {
    const result = extractCandidate(`\`\`\`python\n\`\`\`\n\`\`\`python\n${MODEL_NEW}\`\`\``);
    assert.equal(code(result), MODEL_NEW);
    assert.equal((result as { blockCount: number }).blockCount, 1);
  });

  it('keeps triple backticks inside a longer fence', () => {
    const withDocstring = MODEL_NEW.replace(
      'class ModelNew(nn.Module):',
      'class ModelNew(nn.Module):\n    """Use like:\n    ```\n    ModelNew()(x)\n    ```\n    """',
    );
    assert.equal(code(extractCandidate(`\`\`\`\`python\n${withDocstring}\`\`\`\``)), withDocstring);
  });
});

describe('findFencedBlocks', () => {
  it('finds languages, contents and termination', () => {
    const blocks = findFencedBlocks('a\n```cpp\nint x;\n```\nb\n~~~\nplain\n~~~\n```python\nopen');
    assert.deepEqual(
      blocks.map((block) => [block.language, block.content, block.terminated]),
      [
        ['cpp', 'int x;', true],
        [null, 'plain', true],
        ['python', 'open', false],
      ],
    );
  });

  it('does not close a backtick fence with tildes or a shorter fence', () => {
    const blocks = findFencedBlocks('````\n~~~\n```\n````');
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.content, '~~~\n```');
  });

  it('does not treat inline triple backticks as a fence', () => {
    assert.deepEqual(findFencedBlocks('Use ```inline``` code here.'), []);
  });
});
