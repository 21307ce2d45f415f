/** What the benchmarks under bench/ share: their flag parsing, progress lines, host description and reason lines. */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { z } from 'zod';

/** A `--name` flag that must be an integer of at least `minimum`. */
export const count = (name: string, minimum: number) =>
  z.coerce
    .number({ error: () => `expected \`--${name}\` to be a number` })
    .int(`expected \`--${name}\` to be an integer`)
    .min(minimum, `expected \`--${name}\` to be at least ${minimum}`);

/** One progress line on stderr, with the time of day (UTC). */
export const log = (line: string): void => void process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** The host's CPU model, from /proc/cpuinfo where there is one. */
export async function cpuModel(): Promise<string> {
  const info = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  return /model name\s*:\s*(.+)/.exec(info)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown CPU';
}

/** A verdict's reason in one line of a record: `check: first non-empty line of the message` (200 characters at most). */
export function reasonLine(reason: { check?: string | undefined; message?: string | undefined }): string {
  const line = (reason.message ?? '').split('\n').find((text) => text.trim().length > 0) ?? '';
  return `${reason.check ?? '?'}: ${line.trim().slice(0, 200)}`;
}
