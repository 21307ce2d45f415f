/**
 * What a problem does once it stalls: `switch-strategy` hands the problem to another strategy,
 * `continue` records the stall and goes on, `pause` stops the problem for a person to step in
 * (it is resumed with `kforge optimize --resume RUN_ID`). Apart from the stall detector (zod) so
 * that `kforge optimize --help` lists them without loading it.
 */
export const STALL_POLICIES = ['switch-strategy', 'continue', 'pause'] as const;
