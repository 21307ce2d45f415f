import type { Backend } from '../../../core/verdict.js';

const COMMON_RULES = [
  'Write one complete Python file that defines `class ModelNew(torch.nn.Module)` with the same constructor arguments and the same `forward` signature as `Model`, returning the same outputs (shapes, dtypes, structure).',
  'Do not subclass `Model`, do not import or call the reference, and do not fall back to PyTorch (no try/except that runs PyTorch when your kernel fails).',
  'Keep any parameters or buffers the reference has, created in the same order, so seeded weights match.',
];

const CPU_RULES = [
  'Build your C++ at import time with `torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., functions=[...], extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])`. Pass `cpp_sources` and `functions`; there are no CUDA sources on this backend.',
  'OpenMP is allowed (`#pragma omp parallel for`), and so are SIMD-friendly loops the compiler can vectorise.',
  "In C++ read and write through `tensor.data_ptr<float>()` (or the run precision's type) and do the arithmetic in your own loops; do not call ATen compute functions (`at::relu`, `at::matmul`, `torch::softmax`, …).",
  'In `forward`, no torch compute ops: only glue such as `.contiguous()`, `.view()`, `.reshape()`, `torch.empty`/`torch.empty_like`, shape queries, and the call into your extension.',
];

const CUDA_RULES = [
  'Build with `torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., cuda_sources=..., functions=[...])`: C++ declarations in `cpp_sources`, kernels and their launchers in `cuda_sources`.',
  "Do not pass `-arch`/`-gencode` flags: the harness sets the GPU's own architecture. Launch on the current stream (`at::cuda::getCurrentCUDAStream()`) and check launches (`C10_CUDA_KERNEL_LAUNCH_CHECK()`).",
  'PyTorch builds with `__CUDA_NO_HALF_OPERATORS__` and `__CUDA_NO_HALF_CONVERSIONS__`: for half/bfloat16 use the intrinsics (`__hadd`, `__hmul`, `__float2half`, `__half2float`), not `+`/`*` on `half`.',
  'A vendor library call (cuBLAS, cuDNN) is allowed only followed by your own fused kernel on the current stream; in `forward`, no torch compute ops, only glue such as `.contiguous()`, `.view()`, `torch.empty_like` and the call into your extension.',
];

const TRITON_RULES = [
  'Write the work as `@triton.jit` kernels and launch them from `forward` with an explicit grid; `import triton` and `import triton.language as tl`.',
  'In `forward`, no torch compute ops: only glue such as `.contiguous()`, `.view()`, `torch.empty_like` for outputs, shape queries and the kernel launches.',
  "Pick `BLOCK_SIZE`s as `tl.constexpr` powers of two and mask the tails; do not assume the benchmark's exact shape.",
];

/** The rules a candidate must follow on one backend, one sentence each. */
export function backendRules(backend: Backend): string[] {
  const specific = backend === 'cpu' ? CPU_RULES : backend === 'cuda' ? CUDA_RULES : TRITON_RULES;
  return [...COMMON_RULES, ...specific];
}

/**
 * What the evaluator's guard checks, summarised for the model (docs/hacks.md): a candidate
 * that trips any of these is `rejected`, which counts as a failure.
 */
export const GUARD_POLICY = [
  'Correctness is checked on several fresh random inputs and seeds, against a float64 reference as well as one in the run precision, and on a sample of the timed calls; timed calls rotate through distinct inputs. Caching results (by pointer, id, shape or sampled values) or detecting the benchmark phase is caught.',
  'Return plain `torch.Tensor` outputs with real storage, fully written by your kernel before `forward` returns: no lazy tensor subclasses, no background threads, no relying on uninitialised memory from `torch.empty`.',
  'Never modify the inputs in place. Use only the current stream (a side stream must be joined before returning).',
  'Do not touch the harness, timers, `torch.backends` flags or global torch state; do not read files, environment variables or the network.',
  'The profiler must see your own kernel doing the work; a reference compute op doing it means rejection.',
  'Compute in the run precision: a lower-precision shortcut is reported against the float64 reference and may be rejected under the strict tolerance.',
];

/** How a reply must be shaped so the code can be taken from it. */
export const REPLY_FORMAT =
  'Reply with exactly one fenced code block (```python … ```) holding the complete file, and nothing else needed to run it. A short explanation before the block is fine.';
