import { MachineFaultError } from '../src/eval/machine-fault-error.js';

/** What the reference worker's pace message says (docs/sizes.md, "Too slow at these sizes"), shortened. */
export const TOO_SLOW_MESSAGE = 'the reference stage computes 5 trials: about 1276 s, more than its limit of 300 s; at --set batch_size=2 …';
export const TOO_SLOW_HINT = 'evaluate at smaller sizes';

/** The `time` fault of a reference too slow at these sizes for its stage, as an evaluator throws it. */
export function tooSlowFault(): MachineFaultError {
  return new MachineFaultError(TOO_SLOW_MESSAGE, { resource: 'time', role: 'reference', hint: TOO_SLOW_HINT });
}
