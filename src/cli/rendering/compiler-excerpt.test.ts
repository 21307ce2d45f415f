import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilerErrorExcerpt } from './compiler-excerpt.js';

test('gcc: the first error with its source line and caret, without the build folder', () => {
  const log = [
    '[1/2] c++ -MMD -MF main.o.d -c /work/.kforge/builds/8982ca67/ext/main.cpp -o main.o',
    'FAILED: main.o',
    "/work/.kforge/builds/8982ca67/ext/main.cpp: In function 'at::Tensor relu_forward(at::Tensor)':",
    "/work/.kforge/builds/8982ca67/ext/main.cpp:9:42: error: cannot convert 'double*' to 'float*' in initialization",
    '    9 |     float* out_ptr = out.data_ptr<double>();',
    '      |                      ~~~~~~~~~~~~~~~~~~~~^~',
    '      |                                          |',
    '      |                                          double*',
    "/work/.kforge/builds/8982ca67/ext/main.cpp:12:1: error: expected ';' before '}' token",
    'ninja: build stopped: subcommand failed.',
  ].join('\n');
  assert.deepEqual(compilerErrorExcerpt(log), [
    "main.cpp:9:42: error: cannot convert 'double*' to 'float*' in initialization",
    '    9 |     float* out_ptr = out.data_ptr<double>();',
    '      |                      ~~~~~~~~~~~~~~~~~~~~^~',
    '      |                                          |',
    '      |                                          double*',
  ]);
});

test('nvcc: the error, its detail and the code line down to the caret', () => {
  const log = [
    '[1/3] /usr/local/cuda/bin/nvcc -c /tmp/kforge/builds/ab12/k/cuda.cu -o cuda.cuda.o',
    '/tmp/kforge/builds/ab12/k/cuda.cu(14): error: no operator "*" matches these operands',
    '            operand types are: __half * __half',
    '      y[i] = x[i] * x[i];',
    '                  ^',
    '',
    '1 error detected in the compilation of "/tmp/kforge/builds/ab12/k/cuda.cu".',
  ].join('\n');
  assert.deepEqual(compilerErrorExcerpt(log), [
    'cuda.cu(14): error: no operator "*" matches these operands',
    '            operand types are: __half * __half',
    '      y[i] = x[i] * x[i];',
    '                  ^',
  ]);
});

test('no error line, or no log at all: nothing to excerpt', () => {
  assert.equal(compilerErrorExcerpt("nvcc fatal   : Unsupported gpu architecture 'sm_70'"), null);
  assert.equal(compilerErrorExcerpt(undefined), null);
});
