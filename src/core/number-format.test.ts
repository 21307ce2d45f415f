import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBytes, formatMs, formatSpeedup } from './number-format.js';

test('bytes read in the unit of their size, whole bytes below a KiB', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1024), '1.0 KiB');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(8 * 1024 ** 2), '8.0 MiB');
});

test('from a tenth of a GiB on, bytes are GiB with two decimals, as device memory is', () => {
  assert.equal(formatBytes(0.1 * 1024 ** 3 - 1), '102.4 MiB');
  assert.equal(formatBytes(0.1 * 1024 ** 3), '0.10 GiB');
  assert.equal(formatBytes(0.75 * 1024 ** 3), '0.75 GiB');
  assert.equal(formatBytes(20 * 1024 ** 3), '20.00 GiB');
});

test('times keep three significant digits and speedups two decimals', () => {
  assert.equal(formatMs(0.2384), '0.238 ms');
  assert.equal(formatMs(1480.2), '1480 ms');
  assert.equal(formatSpeedup(1.624), '1.62x');
  assert.equal(formatSpeedup(null), '—');
});
