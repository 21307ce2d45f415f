import type { EvaluationResult } from '../core/verdict.js';
import { DEVICE_MEMORY_VARIABLE, parseByteSize } from '../eval/pipeline/device-capacity.js';
import { UsageError } from './usage-error.js';

/**
 * `--set NAME=VALUE` values as problem overrides: integers, decimals or true/false.
 *
 * @example parseOverrides(['batch_size=256', 'eps=1e-5']) // { batch_size: 256, eps: 0.00001 }
 */
export function parseOverrides(values: readonly string[]): Record<string, number | boolean> {
  const overrides: Record<string, number | boolean> = {};
  for (const text of values) {
    const match = /^\s*([A-Za-z_]\w*)\s*=\s*(.+?)\s*$/.exec(text);
    if (!match) throw new UsageError(`expected \`--set\` to be NAME=VALUE (e.g. --set batch_size=256), got \`${text}\``);
    const [, name, raw] = match as unknown as [string, string, string];
    const lowered = raw.toLowerCase();
    const value = lowered === 'true' ? true : lowered === 'false' ? false : Number(raw);
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new UsageError(`expected \`--set ${name}\` to be a number or true/false, got \`${raw}\``);
    }
    overrides[name] = value;
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
