import type { StageTimeoutsSeconds } from '../eval/evaluator.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from '../eval/run/stage-limits.js';

/**
 * The limits a `--timeout-<stage>` flag exists for, in the order the help lists them. Apart from
 * the flags' schema (zod) so that a command's `--help` lists them without loading it.
 */
export const TIMEOUT_STAGES = Object.keys(DEFAULT_STAGE_TIMEOUTS_SECONDS) as Array<keyof StageTimeoutsSeconds>;

/** Commander's property name of a `--timeout-<stage>` flag: `build` gives `timeoutBuild`. */
export function timeoutOptionName(stage: keyof StageTimeoutsSeconds): string {
  return `timeout${stage[0]!.toUpperCase()}${stage.slice(1)}`;
}
