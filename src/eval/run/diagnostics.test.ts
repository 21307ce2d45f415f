import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnoseCompilerOutput, findFirstCompilerError, findKnownCause, formatCompilerError } from './diagnostics.js';

/** Real outputs, captured from nvcc 13.0, g++ 12 and torch 1.13's load_inline on this project's machines. */
const NVCC_ARCH = [
  "Error building extension 'layernorm': [1/3] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile --dependency-output cuda.cuda.o.d -DTORCH_EXTENSION_NAME=layernorm -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a --compiler-options '-fPIC' -arch=sm_70 -std=c++17 -c /scratch/build/layernorm/cuda.cu -o cuda.cuda.o ",
  'FAILED: cuda.cuda.o ',
  "nvcc fatal   : Unsupported gpu architecture 'sm_70'",
  'ninja: build stopped: subcommand failed.',
].join('\n');

const NVCC_HALF = `FAILED: cuda.cuda.o
/usr/local/cuda/bin/nvcc -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -c /scratch/build/k/cuda.cu -o cuda.cuda.o
/scratch/build/k/cuda.cu(2): error: no operator "*" matches these operands
            operand types are: __half * const __half
  __attribute__((global)) void k(__half* a, const __half* b) { a[0] = a[0] * b[0]; float f = a[1]; }
                                                                           ^
/scratch/build/k/cuda.cu(2): note #3328-D: built-in operator*(<promoted arithmetic>, <promoted arithmetic>) does not match because argument #1 does not match parameter

/scratch/build/k/cuda.cu(2): error: no suitable conversion function from "__half" to "float" exists

2 errors detected in the compilation of "/scratch/build/k/cuda.cu".
ninja: build stopped: subcommand failed.`;

const NVCC_UNDEFINED = `k3.cu(1): warning #177-D: variable "unused" was declared but never referenced
k3.cu(1): error: identifier "undefined_thing" is undefined
  __attribute__((global)) void k(float* a) { a[0] = undefined_thing; }
                                                    ^

1 error detected in the compilation of "k3.cu".`;

const GXX_MISSING_HEADER = `Error building extension 't_hdr': [1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=t_hdr -isystem /usr/lib/python3/dist-packages/torch/include -fPIC -std=c++14 -c /tmp/cc/ext/t_hdr/main.cpp -o main.o
FAILED: main.o
c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=t_hdr -fPIC -std=c++14 -c /tmp/cc/ext/t_hdr/main.cpp -o main.o
/tmp/cc/ext/t_hdr/main.cpp:2:10: fatal error: missing_header.h: No such file or directory
    2 | #include <missing_header.h>
      |          ^~~~~~~~~~~~~~~~~~
compilation terminated.
ninja: build stopped: subcommand failed.`;

const GXX_UNDECLARED_BINDING = `FAILED: main.o
/tmp/cc/ext/t_undecl/main.cpp: In function ‘void pybind11_init_t_undecl(pybind11::module_&)’:
/tmp/cc/ext/t_undecl/main.cpp:4:40: error: ‘f’ was not declared in this scope; did you mean ‘torch::jit::AttributeKind::f’?
    4 | m.def("f", torch::wrap_pybind_function(f), "f");
      |                                        ^
ninja: build stopped: subcommand failed.`;

const NVCC_MISSING_HEADER = `/scratch/build/k/cuda.cu(3): catastrophic error: cannot open source file "cutlass/gemm/device/gemm.h"
  #include <cutlass/gemm/device/gemm.h>
                                      ^

1 catastrophic error detected in the compilation of "/scratch/build/k/cuda.cu".`;

const LOAD_UNDEFINED_SYMBOL = `Traceback (most recent call last):
  File "/work/worker/kforge_worker/build/build.py", line 80, in build_candidate
ImportError: /scratch/build/relu_ext/relu_ext.so: undefined symbol: _Z11relu_kernelPKfPfi`;

const LINKER = `/usr/bin/ld: cuda.cuda.o: in function \`launch(float*)':
tmpxft_0000_cuda.cudafe1.cpp:(.text+0x5a): undefined reference to \`helper(float*)'
collect2: error: ld returned 1 exit status`;

describe('findFirstCompilerError', () => {
  it('reads nvcc fatal lines', () => {
    const error = findFirstCompilerError(NVCC_ARCH);
    assert.deepEqual(error, {
      file: null,
      line: null,
      column: null,
      message: "Unsupported gpu architecture 'sm_70'",
      text: "nvcc fatal   : Unsupported gpu architecture 'sm_70'",
    });
  });

  it('reads nvcc file(line): error lines, skipping warnings and notes', () => {
    const error = findFirstCompilerError(NVCC_UNDEFINED);
    assert.equal(error?.file, 'k3.cu');
    assert.equal(error?.line, 1);
    assert.equal(error?.message, 'identifier "undefined_thing" is undefined');
    assert.equal(findFirstCompilerError(NVCC_HALF)?.message, 'no operator "*" matches these operands');
    const catastrophic = findFirstCompilerError(NVCC_MISSING_HEADER);
    assert.equal(catastrophic?.line, 3);
    assert.equal(catastrophic?.message, 'cannot open source file "cutlass/gemm/device/gemm.h"');
  });

  it('reads gcc file:line:column: (fatal) error lines', () => {
    const error = findFirstCompilerError(GXX_MISSING_HEADER);
    assert.equal(error?.file, '/tmp/cc/ext/t_hdr/main.cpp');
    assert.equal(error?.line, 2);
    assert.equal(error?.column, 10);
    assert.equal(error?.message, 'missing_header.h: No such file or directory');
    assert.equal(formatCompilerError(error!), '/tmp/cc/ext/t_hdr/main.cpp:2: missing_header.h: No such file or directory');
    assert.equal(findFirstCompilerError(GXX_UNDECLARED_BINDING)?.column, 40);
  });

  it('reads linker and load errors, and ignores colour codes', () => {
    assert.equal(findFirstCompilerError(LINKER)?.message, "undefined reference to `helper(float*)'");
    assert.equal(findFirstCompilerError('/usr/bin/ld: cannot find -lcublas')?.message, 'cannot find -lcublas');
    assert.match(findFirstCompilerError(LOAD_UNDEFINED_SYMBOL)?.message ?? '', /undefined symbol: _Z11relu_kernelPKfPfi/);
    const coloured = '\u001b[01m\u001b[Kk.cpp:3:1:\u001b[m\u001b[K \u001b[01;31m\u001b[Kerror: \u001b[m\u001b[Kexpected ‘;’';
    assert.equal(findFirstCompilerError(coloured)?.line, 3);
    assert.equal(findFirstCompilerError('[1/2] c++ -c main.cpp\nall good'), null);
  });
});

describe('findKnownCause', () => {
  it('names a hard-coded architecture that this CUDA dropped', () => {
    const cause = findKnownCause(NVCC_ARCH, { cudaVersion: '13.0' });
    assert.equal(cause?.id, 'unsupported-architecture');
    assert.equal(
      cause?.message,
      "the candidate hard-codes -arch=sm_70, which this CUDA (13.0) no longer supports; remove the flag: kforge builds for the GPU's own architecture",
    );
    assert.match(findKnownCause("nvcc fatal : Unsupported gpu architecture 'compute_60'")?.message ?? '', /-arch=sm_60, which this CUDA no/);
  });

  it('explains the half operators PyTorch disables', () => {
    const cause = findKnownCause(NVCC_HALF);
    assert.equal(cause?.id, 'half-operators');
    assert.match(cause?.message ?? '', /-D__CUDA_NO_HALF_OPERATORS__/);
    assert.match(cause?.message ?? '', /__hmul\/__hadd\/__float2half/);
  });

  it('does not blame half operators for an unrelated error in a build with those flags', () => {
    const unrelated = `${NVCC_ARCH.split('\n')[0]}\nk.cu(4): error: no operator "*" matches these operands\n   operand types are: Foo * int`;
    assert.equal(findKnownCause(unrelated), null);
  });

  it('names a missing header, from gcc and from nvcc', () => {
    assert.match(findKnownCause(GXX_MISSING_HEADER)?.message ?? '', /includes `missing_header\.h`, which is not on the include path/);
    assert.match(findKnownCause(NVCC_MISSING_HEADER)?.message ?? '', /`cutlass\/gemm\/device\/gemm\.h`/);
  });

  it('explains a load_inline binding without a declaration', () => {
    const cause = findKnownCause(GXX_UNDECLARED_BINDING);
    assert.equal(cause?.id, 'undeclared-binding');
    assert.match(cause?.message ?? '', /`f` is not declared in cpp_sources/);
  });

  it('explains an undefined symbol at load', () => {
    const cause = findKnownCause(LOAD_UNDEFINED_SYMBOL);
    assert.equal(cause?.id, 'undefined-symbol');
    assert.match(cause?.message ?? '', /`_Z11relu_kernelPKfPfi` is declared but never defined/);
  });

  it('finds nothing to explain in an ordinary error', () => {
    assert.deepEqual(diagnoseCompilerOutput(NVCC_UNDEFINED).knownCause, null);
  });
});
