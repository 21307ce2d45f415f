import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDACTED, redactDeep, redactSecrets, secretValuesFromEnvironment } from './redact-secrets.js';

describe('redactSecrets', () => {
  it('removes known secret values wherever they appear', () => {
    const key = 'local-vllm-key-42';
    assert.equal(redactSecrets(`401 for key ${key} (${key})`, [key]), `401 for key ${REDACTED} (${REDACTED})`);
  });

  it('ignores secrets too short to replace safely', () => {
    assert.equal(redactSecrets('a b c', ['a']), 'a b c');
  });

  it('removes credential-shaped strings it was not told about', () => {
    const samples = [
      'Incorrect API key provided: sk-proj-AbCdEf0123456789xyzXYZ.',
      'key sk-ant-api03-AbCdEf0123456789_xyz-XYZ rejected',
      'OpenRouter sk-or-v1-0123456789abcdef0123456789abcdef',
      'Google key AIzaSyA0123456789abcdefghijklmnopqrstu',
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
      'GET https://generativelanguage.googleapis.com/v1beta/models?key=secretvalue123&alt=json',
      '{"x-api-key": "abcdefgh12345678"}',
    ];
    for (const sample of samples) {
      const redacted = redactSecrets(sample);
      assert.match(redacted, /\[redacted\]/, sample);
      for (const fragment of ['0123456789', 'AbCdEf', 'payload', 'secretvalue', 'abcdefgh1234']) {
        assert.ok(!redacted.includes(fragment), `${sample} -> ${redacted}`);
      }
    }
  });

  it('leaves ordinary text alone', () => {
    const text = 'HTTP 500: upstream model overloaded; retry later (task-id 12, sk-learn style)';
    assert.equal(redactSecrets(text), text);
  });
});

describe('redactDeep', () => {
  it('redacts nested strings and credential-named fields', () => {
    const value = {
      apiKey: 'anything',
      headers: { Authorization: 'Bearer 0123456789abcdef' },
      messages: ['uses sk-proj-0123456789abcdefghij'],
      count: 3,
    };
    assert.deepEqual(redactDeep(value), {
      apiKey: REDACTED,
      headers: { Authorization: REDACTED },
      messages: [`uses ${REDACTED}`],
      count: 3,
    });
  });
});

describe('environment helpers', () => {
  const env = {
    OPENAI_API_KEY: 'sk-openai-value-123',
    MY_SERVICE_TOKEN: 'token-value-456',
    VLLM_API_KEY: 'vllm-value-789',
    PATH: '/usr/bin',
    HOME: '/home/k',
  };

  it('collects secret values', () => {
    assert.deepEqual(secretValuesFromEnvironment(env).sort(), ['sk-openai-value-123', 'token-value-456', 'vllm-value-789']);
  });
});
