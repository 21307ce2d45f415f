import { createHash } from 'node:crypto';

/**
 * The identity of a problem as evaluated: the SHA-256 of its file, and of the overridden module
 * constants with it when there are any (`--set`), so baselines measured at other sizes are cached
 * apart from the problem's own.
 */
export function problemIdentity(problem: Buffer | string, overrides: Readonly<Record<string, number | boolean>> = {}): string {
  const hash = createHash('sha256').update(problem);
  const names = Object.keys(overrides).sort();
  if (names.length > 0) hash.update(`\0overrides:${JSON.stringify(names.map((name) => [name, overrides[name]]))}`);
  return hash.digest('hex');
}
