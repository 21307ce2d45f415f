import type { EvaluationResult } from '../../core/verdict.js';
import { DEVICE_MEMORY_VARIABLE, parseByteSize } from '../../eval/devices/device-capacity.js';
import { UsageError } from '../io/usage-error.js';

/** One `--set` value: a module constant's new value, for every problem that has it or for one problem. */
export interface SizeSetting {
  /**
   * The problem it is for (`--set 1_Square_matrix_multiplication_:N=512`: a problem's file name,
   * with or without `.py`, or its path), or null: every problem of the command that has the name.
   */
  scope: string | null;
  name: string;
  value: number | boolean;
  /** The value as given, for messages. */
  text: string;
}

/**
 * `--set [PROBLEM:]NAME=VALUE` values: integers, decimals or true/false, each for every problem that
 * has the constant or, with a `PROBLEM:` prefix, for that problem only (problem-overrides.ts).
 *
 * @example parseSizeSettings(['batch_size=256', '1_Square_matrix_multiplication_:N=512'])
 */
export function parseSizeSettings(values: readonly string[]): SizeSetting[] {
  return values.map((text) => {
    const match = /^\s*(?:(.+?)\s*:\s*)?([A-Za-z_]\w*)\s*=\s*(.+?)\s*$/.exec(text);
    if (!match) throw new UsageError(`expected \`--set\` to be NAME=VALUE or PROBLEM:NAME=VALUE (e.g. --set batch_size=256), got \`${text}\``);
    const [, scope, name, raw] = match as unknown as [string, string | undefined, string, string];
    const lowered = raw.toLowerCase();
    const value = lowered === 'true' ? true : lowered === 'false' ? false : Number(raw);
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new UsageError(`expected \`--set ${text.trim()}\` to give a number or true/false, got \`${raw}\``);
    }
    return { scope: scope ?? null, name, value, text: text.trim() };
  });
}

/**
 * `--set NAME=VALUE` values as the overrides of one problem, later values winning. A value scoped
 * to a problem (`PROBLEM:NAME=VALUE`) is resolved against the command's problems instead
 * (problem-overrides.ts), so here it is a usage error.
 *
 * @example parseOverrides(['batch_size=256', 'eps=1e-5']) // { batch_size: 256, eps: 0.00001 }
 */
export function parseOverrides(values: readonly string[]): Record<string, number | boolean> {
  const overrides: Record<string, number | boolean> = {};
  for (const setting of parseSizeSettings(values)) {
    if (setting.scope !== null) throw new UsageError(`\`--set ${setting.text}\` names a problem; give NAME=VALUE here`);
    overrides[setting.name] = setting.value;
  }
  return overrides;
}

/** The worker's check for a `--set` naming a constant the problem never assigns (worker/kforge_worker/problem/overrides.py). */
export const OVERRIDE_CHECK = 'problem-override';

/**
 * The worker's message when `--set` named a constant the problem lacks, else null: the command was
 * misused (exit 2, like an unknown flag), so the `invalid_input` result is no verdict to report.
 */
export function overrideMisuse(result: EvaluationResult): string | null {
  if (result.verdict !== 'invalid_input') return null;
  return result.reasons.find((reason) => reason.check === OVERRIDE_CHECK)?.message ?? null;
}

const DURATION_UNITS_MS: Record<string, number> = { '': 1000, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `--wait DURATION` (or `flag`'s) in ms: seconds by default, or with `s`, `m`, `h` (`90`, `90s`, `10m`, `1.5h`).
 *
 * @example parseDuration('10m') // 600000
 */
export function parseDuration(text: string, flag = '--wait'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$/i.exec(text);
  if (!match) throw new UsageError(`expected \`${flag}\` to be a duration such as 90s, 10m or 1h, got \`${text}\``);
  return Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]!.toLowerCase()]!);
}

/** Checks `KFORGE_DEVICE_MEMORY_BYTES` up front, so a bad value is a usage error, not a fault later. */
export function checkDeviceMemoryVariable(environment: NodeJS.ProcessEnv): void {
  const value = environment[DEVICE_MEMORY_VARIABLE];
  if (value === undefined || value.trim() === '') return;
  try {
    parseByteSize(value);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
