/**
 * The search strategies `kforge optimize --strategy` accepts. Apart from their schema (attempt.ts,
 * zod) so that `kforge optimize --help` lists them without loading it.
 */
export const STRATEGY_NAMES = ['refine', 'sample', 'ideas'] as const;
