import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCliLogger, formatLogRecord } from './cli-logger.js';

test('text format: one line with level, message and short fields; no stack, no long or multi-line values', () => {
  const lines: string[] = [];
  const logger = createCliLogger({ environment: {}, stderr: { write: (text: string) => lines.push(text) } });
  const error = new Error('the reference worker exited with status 2');
  logger.warn({ err: error, exitCode: 2, stderr: 'Traceback (most recent call last):\n  File "x"' }, 'warm worker failed');
  logger.info('not shown at the default level');
  assert.deepEqual(lines, ['kforge: warning: warm worker failed: the reference worker exited with status 2 (exitCode=2)\n']);
});

test('json format when asked (flag or KFORGE_LOG_FORMAT): pino lines as they are', () => {
  const lines: string[] = [];
  createCliLogger({ environment: { KFORGE_LOG_FORMAT: 'json' }, stderr: { write: (text: string) => lines.push(text) } }).warn({ exitCode: 1 }, 'hello');
  const record = JSON.parse(lines[0]!) as { level: number; msg: string; exitCode: number };
  assert.deepEqual([record.level, record.msg, record.exitCode], [40, 'hello', 1]);
  const flagged: string[] = [];
  createCliLogger({ environment: {}, stderr: { write: (text: string) => flagged.push(text) } }, { format: 'json' }).error('x');
  assert.match(flagged[0]!, /^\{"level":50/);
});

test('a line that is not JSON passes through as one line', () => {
  assert.equal(formatLogRecord('plain\n'), 'kforge: plain\n');
});
