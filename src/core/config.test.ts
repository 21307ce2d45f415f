import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig, parseConfig, redactConfig, type KforgeConfig } from './config.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kforge-config-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function issuesOf(value: unknown): Array<[string, string]> {
  try {
    parseConfig(value, 'test.json');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.issues.map((issue) => [issue.path, issue.message]);
  }
  return assert.fail('expected a ConfigError');
}

const FULL: KforgeConfig = {
  provider: 'vllm',
  model: 'Qwen/Qwen3-32B',
  baseUrl: 'http://127.0.0.1:8000/v1',
  apiKeyEnv: 'MY_VLLM_KEY',
  temperature: 0.6,
  maxOutputTokens: 16000,
  reasoningEffort: 'high',
  timeoutSeconds: 600,
  maxAttempts: 5,
  concurrency: { vllm: 16, openai: 4 },
  prices: { 'Qwen/Qwen3-32B': { inputUsdPerMillionTokens: 0.1, outputUsdPerMillionTokens: 0.3 } },
  evaluator: { backend: 'cuda', precision: 'bf16', tolerance: 'kernelbench', trials: 5, perfTrials: 100 },
  budgets: { maxCandidates: 64, maxMinutes: 90, maxTokens: 2_000_000, maxCostUsd: 25, targetSpeedup: 2 },
  strategy: { name: 'beam', options: { width: 4 } },
  store: { path: '.kforge/runs.sqlite' },
  guard: { policy: 'strict' },
};

describe('parseConfig', () => {
  it('accepts a full config and an empty one', () => {
    assert.deepEqual(parseConfig(FULL, 'x'), FULL);
    assert.deepEqual(parseConfig({}, 'x'), {});
  });

  it('names the JSON path, what was expected and what was given', () => {
    const issues = issuesOf({
      provider: 'openia',
      temperature: 3,
      maxAttempts: 1.5,
      baseUrl: 'localhost:8000',
      budgets: { maxCostUsd: -3 },
      evaluator: { backend: 'rocm' },
      prices: { 'gpt-4o': { inputUsdPerMillionTokens: '2.5', outputUsdPerMillionTokens: 10 } },
      providr: 'x',
    });
    const byPath = new Map(issues);
    assert.match(byPath.get('provider') ?? '', /expected one of "openai", .*"files", got "openia"/);
    assert.equal(byPath.get('temperature'), 'expected a number <= 2, got 3');
    assert.equal(byPath.get('maxAttempts'), 'expected an integer, got 1.5');
    assert.equal(byPath.get('baseUrl'), 'expected an http(s) URL, got "localhost:8000"');
    assert.equal(byPath.get('budgets.maxCostUsd'), 'expected a number > 0, got -3');
    assert.match(byPath.get('evaluator.backend') ?? '', /expected one of "cuda", "triton", "cpu", got "rocm"/);
    assert.equal(byPath.get('prices["gpt-4o"].inputUsdPerMillionTokens'), 'expected a number, got "2.5"');
    assert.equal(byPath.get('(top level)'), 'unknown key "providr"');
  });

  it('rejects unknown keys in nested sections and unknown providers in concurrency', () => {
    const issues = issuesOf({ budgets: { maxCost: 1 }, concurrency: { azure: 2 } });
    assert.deepEqual(issues.map(([path]) => path).sort(), ['budgets', 'concurrency'].sort());
  });

  it('never shows the API key in a message', () => {
    try {
      parseConfig({ apiKey: 42 }, 'x');
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /at apiKey: expected a string, got a value \(not shown\)/);
    }
  });
});

describe('loadConfig', () => {
  it('reads kforge.config.json from the working directory', async () => {
    await writeFile(join(dir, 'kforge.config.json'), JSON.stringify({ provider: 'ollama', model: 'qwen2.5-coder:32b' }));
    const loaded = await loadConfig(undefined, { cwd: dir });
    assert.deepEqual(loaded.config, { provider: 'ollama', model: 'qwen2.5-coder:32b' });
    assert.equal(loaded.path, join(dir, 'kforge.config.json'));
  });

  it('returns an empty config when no file exists and none was asked for', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'kforge-config-empty-'));
    try {
      assert.deepEqual(await loadConfig(undefined, { cwd: empty }), { config: {}, path: undefined });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('fails when an explicit path does not exist', async () => {
    await assert.rejects(loadConfig('missing.json', { cwd: dir }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /Cannot read the config file .*missing\.json \(ENOENT\)/);
      return true;
    });
  });

  it('reports JSON syntax errors with line and column', async () => {
    await writeFile(join(dir, 'broken.json'), '{\n  "provider": "openai",\n  "model": gpt-5\n}\n');
    await assert.rejects(loadConfig('broken.json', { cwd: dir }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /not valid JSON at line 3, column 12/);
      return true;
    });
  });

  it('reports schema errors with the file name', async () => {
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ budgets: { maxCandidates: 0 } }));
    await assert.rejects(loadConfig('bad.json', { cwd: dir }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /Invalid config .*bad\.json:\n {2}- at budgets\.maxCandidates: expected a number > 0, got 0/);
      return true;
    });
  });
});

describe('redactConfig', () => {
  it('hides the API key and nothing else', () => {
    assert.deepEqual(redactConfig({ provider: 'openai', apiKey: 'sk-secret-value-1234567' }), {
      provider: 'openai',
      apiKey: '[redacted]',
    });
    assert.deepEqual(redactConfig({ provider: 'openai' }), { provider: 'openai' });
  });
});
