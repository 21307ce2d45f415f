/**
 * How log records reach standard error: one sentence a line for a person, or pino's JSON lines for
 * a machine. Apart from the logger (pino) so that a command's `--help` lists them without loading it.
 */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
