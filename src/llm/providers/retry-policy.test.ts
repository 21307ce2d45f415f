import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelayMs, DEFAULT_BACKOFF, nextDelayMs, retryAfterMs } from './retry-policy.js';

describe('retry policy', () => {
  it('grows exponentially, jittered between half and all of the delay, capped', () => {
    const options = { initialDelayMs: 100, factor: 2, maxDelayMs: 1000 };
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, options, () => 0)),
      [50, 100, 200, 400, 500, 500],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => backoffDelayMs(n, options, () => 0.999999)),
      [100, 200, 400],
    );
  });

  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2025-09-01T00:00:00Z');
    assert.equal(retryAfterMs({ 'retry-after': '3' }, now), 3000);
    assert.equal(retryAfterMs({ 'retry-after': '0.25' }, now), 250);
    assert.equal(retryAfterMs({ 'retry-after': 'Mon, 01 Sep 2025 00:00:05 GMT' }, now), 5000);
    assert.equal(retryAfterMs({ 'retry-after-ms': '120', 'retry-after': '9' }, now), 120);
    assert.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(retryAfterMs({}, now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });

  it('prefers the server wait, capped at maxDelayMs', () => {
    assert.equal(
      nextDelayMs(1, 5000, DEFAULT_BACKOFF, () => 0),
      5000,
    );
    assert.equal(
      nextDelayMs(1, 600_000, DEFAULT_BACKOFF, () => 0),
      DEFAULT_BACKOFF.maxDelayMs,
    );
    assert.equal(
      nextDelayMs(1, undefined, DEFAULT_BACKOFF, () => 0),
      500,
    );
  });
});
