import type { StageTimeoutsSeconds } from '../../eval/evaluator.js';
import { SIZED_STAGES, STAGE_LIMIT_FLOORS_MS, STAGE_LIMIT_MULTIPLE } from '../../eval/run/sized-stage-limits.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from '../../eval/run/stage-limits.js';

/**
 * The limits a `--timeout-<stage>` flag exists for, in the order the help lists them. Apart from
 * the flags' schema (zod) so that a command's `--help` lists them without loading it.
 */
export const TIMEOUT_STAGES = Object.keys(DEFAULT_STAGE_TIMEOUTS_SECONDS) as Array<keyof StageTimeoutsSeconds>;

/** Commander's property name of a `--timeout-<stage>` flag: `build` gives `timeoutBuild`. */
export function timeoutOptionName(stage: keyof StageTimeoutsSeconds): string {
  return `timeout${stage[0]!.toUpperCase()}${stage.slice(1)}`;
}

/**
 * The default of a `--timeout-<stage>` flag in help words: a fixed number of seconds, or for a stage
 * sized by the reference's measured time (docs/sizes.md, "Stage limits"), that rule.
 */
export function timeoutDefaultHelp(stage: keyof StageTimeoutsSeconds): string {
  if (!(SIZED_STAGES as readonly string[]).includes(stage)) return String(DEFAULT_STAGE_TIMEOUTS_SECONDS[stage]);
  if (stage === 'judge') return `${STAGE_LIMIT_MULTIPLE}x the reference's measured time, at least ${DEFAULT_STAGE_TIMEOUTS_SECONDS.judge}`;
  const floorSeconds = STAGE_LIMIT_FLOORS_MS[stage as keyof typeof STAGE_LIMIT_FLOORS_MS] / 1000;
  return `${STAGE_LIMIT_MULTIPLE}x the reference's measured time for the stage's work, at least ${floorSeconds}`;
}
