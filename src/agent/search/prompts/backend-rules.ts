import { backendModule } from '../../../backends/registry.js';
import type { Backend } from '../../../core/verdict.js';

const COMMON_RULES = [
  'Write one complete Python file that defines `class ModelNew(torch.nn.Module)` with the same constructor arguments and the same `forward` signature as `Model`, returning the same outputs (shapes, dtypes, structure).',
  'Do not subclass `Model`, do not import or call the reference, and do not fall back to PyTorch (no try/except that runs PyTorch when your kernel fails).',
  'Keep any parameters or buffers the reference has, created in the same order, so seeded weights match.',
];

/** The rules a candidate must follow on one backend, one sentence each: the shared ones, then its `prompt.ts`. */
export function backendRules(backend: Backend): string[] {
  return [...COMMON_RULES, ...backendModule(backend).prompt.rules];
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
