import pino, { type Logger } from 'pino';
import type { CliIo } from './cli-io.js';
import type { LogFormat } from './log-formats.js';

export { LOG_FORMATS, type LogFormat } from './log-formats.js';

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

/** pino's own fields, left out of the text line. */
const RECORD_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'v']);

/** Longest field value the text line shows; longer ones (a worker's stderr, a stack) are for `--log-format json`. */
const MAX_FIELD_LENGTH = 80;

/**
 * One pino JSON record as a line a person reads: `kforge: warning: bytecode cache: priming failed
 * (exitCode=1)`. Short one-line fields are kept as `key=value`; an error gives its message, never
 * its stack; multi-line or long values (a worker's whole stderr) are left to the JSON form.
 */
export function formatLogRecord(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `kforge: ${line.trim()}\n`;
  }
  const level = LEVEL_NAMES[Number(record.level)] ?? 'log';
  const error = record.err as { message?: unknown } | undefined;
  const message = [record.msg, typeof error?.message === 'string' ? error.message : undefined]
    .filter((part) => typeof part === 'string' && part.length > 0)
    .join(': ');
  const fields = Object.entries(record)
    .filter(([key, value]) => !RECORD_FIELDS.has(key) && ['string', 'number', 'boolean'].includes(typeof value))
    .map(([key, value]) => [key, String(value)] as const)
    .filter(([, value]) => value.length <= MAX_FIELD_LENGTH && !value.includes('\n'))
    .map(([key, value]) => `${key}=${/\s/.test(value) ? JSON.stringify(value) : value}`);
  return `kforge: ${level}: ${message}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}\n`;
}

export interface CliLoggerOptions {
  /** `--log-format`; default: `KFORGE_LOG_FORMAT` from the environment, else `text`. */
  format?: LogFormat | undefined;
  /** Where lines go. Default: the io's stderr (a live view passes its own notice writer). */
  write?: (text: string) => void;
}

/** The log format a command uses: the flag, else `KFORGE_LOG_FORMAT`, else `text`. */
export function resolveLogFormat(io: Pick<CliIo, 'environment'>, flag?: LogFormat): LogFormat {
  if (flag) return flag;
  return io.environment.KFORGE_LOG_FORMAT === 'json' ? 'json' : 'text';
}

/**
 * The logger of a command: pino at `KFORGE_LOG_LEVEL` (default `warn`), writing to standard error
 * as one readable sentence a record, or as pino's JSON lines with `--log-format json` (or
 * `KFORGE_LOG_FORMAT=json`) for log collectors. Written synchronously, so nothing is lost on exit.
 */
export function createCliLogger(io: Pick<CliIo, 'environment' | 'stderr'>, options: CliLoggerOptions = {}): Logger {
  const level = io.environment.KFORGE_LOG_LEVEL ?? 'warn';
  const write = options.write ?? ((text: string) => void io.stderr.write(text));
  const format = resolveLogFormat(io, options.format);
  return pino({ level }, { write: (line: string) => write(format === 'json' ? line : formatLogRecord(line)) });
}
