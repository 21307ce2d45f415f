import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';

/** sha256 of a UTF-8 string, lower-case hex (64 characters). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Hash of the evaluation options that change a result (backend, precision, tolerance, trials,
 * device, software versions): key order does not matter.
 *
 * @example hashEvaluationOptions({ backend: 'cpu', precision: 'fp32', trials: 5 })
 */
export function hashEvaluationOptions(options: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(options));
}

/**
 * The key under which an evaluation is reused: the same candidate source, on the same problem,
 * under the same options, is evaluated once.
 */
export function evaluationCacheKey(parts: { sourceHash: string; problemHash: string; optionsHash: string }): string {
  return sha256Hex(`kforge-evaluation-v1\n${parts.sourceHash}\n${parts.problemHash}\n${parts.optionsHash}`);
}
