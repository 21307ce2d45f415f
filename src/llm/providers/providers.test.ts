import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startOpenAiCompatibleServer } from '../../../test-support/openai-compatible-server.js';
import { AiSdkKernelModel } from './ai-sdk-kernel-model.js';
import { FilesKernelModel } from './files-kernel-model.js';
import { ModelConfigurationError } from '../model-configuration-error.js';
import { API_KEY_VARIABLES } from './provider-presets.js';
import { createKernelModel } from './providers.js';

async function configurationError(promise: Promise<unknown>): Promise<ModelConfigurationError> {
  const error = await promise.then(
    () => assert.fail('expected a ModelConfigurationError'),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof ModelConfigurationError, String(error));
  return error;
}

describe('createKernelModel', () => {
  it('names the variable to set when a key is missing', async () => {
    const cases = [
      ['openai', /OPENAI_API_KEY/],
      ['anthropic', /ANTHROPIC_API_KEY/],
      ['google', /GOOGLE_GENERATIVE_AI_API_KEY or GEMINI_API_KEY/],
      ['deepseek', /DEEPSEEK_API_KEY/],
      ['openrouter', /OPENROUTER_API_KEY/],
    ] as const;
    for (const [provider, variable] of cases) {
      const error = await configurationError(createKernelModel({ provider, model: 'm' }, { env: {} }));
      assert.match(error.message, variable);
      assert.equal(error.provider, provider);
    }
  });

  it('reads keys from the usual variables, GEMINI_API_KEY included', async () => {
    const google = await createKernelModel({ provider: 'google', model: 'gemini-2.5-pro' }, { env: { GEMINI_API_KEY: 'AIza-test-key-value' } });
    assert.ok(google instanceof AiSdkKernelModel);
    assert.deepEqual(google.describe(), { provider: 'google', modelId: 'gemini-2.5-pro' });
    const anthropic = await createKernelModel({ provider: 'anthropic', model: 'claude-sonnet-4-5' }, { env: { ANTHROPIC_API_KEY: 'sk-ant-test' } });
    assert.deepEqual(anthropic.describe(), { provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
  });

  it('honours apiKeyEnv, and refuses when that variable is empty', async () => {
    const error = await configurationError(
      createKernelModel({ provider: 'vllm', model: 'm', apiKeyEnv: 'MY_VLLM_KEY' }, { env: { VLLM_API_KEY: 'ignored-key' } }),
    );
    assert.match(error.message, /MY_VLLM_KEY/);
  });

  it('requires --base-url for openai-compatible, and checks it', async () => {
    const missing = await configurationError(createKernelModel({ provider: 'openai-compatible', model: 'm' }, { env: {} }));
    assert.equal(missing.setting, '--base-url');
    const bad = await configurationError(createKernelModel({ provider: 'openai-compatible', model: 'm', baseUrl: 'ftp://host/v1' }, { env: {} }));
    assert.match(bad.message, /http\(s\) URL/);
  });

  it('requires --model, and --dir for files', async () => {
    assert.equal((await configurationError(createKernelModel({ provider: 'ollama' }, { env: {} }))).setting, '--model');
    assert.equal((await configurationError(createKernelModel({ provider: 'files' }, { env: {} }))).setting, '--dir');
  });

  it('builds a files model', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kforge-providers-'));
    try {
      await writeFile(join(dir, 'a.py'), 'class ModelNew:\n    pass\n');
      const model = await createKernelModel({ provider: 'files', dir }, { env: {} });
      assert.ok(model instanceof FilesKernelModel);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('talks to a keyless local server with the preset name and no Authorization header', async () => {
    const server = await startOpenAiCompatibleServer({ script: ['local reply'] });
    try {
      const model = await createKernelModel({ provider: 'ollama', model: 'qwen2.5-coder:32b', baseUrl: server.baseUrl, temperature: 0.2 }, { env: {} });
      const reply = await model.generate({ messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(reply.text, 'local reply');
      assert.equal(reply.provider, 'ollama');
      assert.equal(server.requests[0]?.headers.authorization, undefined);
      assert.equal((server.requests[0]?.body as { temperature?: number } | undefined)?.temperature, 0.2);
    } finally {
      await server.close();
    }
  });

  it('uses the key from the settings over the environment, and prices from overrides', async () => {
    const server = await startOpenAiCompatibleServer({
      script: [{ reply: 'priced', usage: { promptTokens: 1_000_000, completionTokens: 1_000_000 } }],
    });
    try {
      const model = await createKernelModel(
        {
          provider: 'deepseek',
          model: 'deepseek-chat',
          baseUrl: server.baseUrl,
          apiKey: 'sk-from-config-000000000000',
          prices: { 'deepseek-chat': { inputUsdPerMillionTokens: 0.5, outputUsdPerMillionTokens: 1.5 } },
        },
        { env: { DEEPSEEK_API_KEY: 'sk-from-env-1111111111111' } },
      );
      const reply = await model.generate({ messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(server.requests[0]?.headers.authorization, 'Bearer sk-from-config-000000000000');
      assert.equal(reply.costUsd, 2);
      assert.equal(reply.priced, true);
    } finally {
      await server.close();
    }
  });

  it('puts the reasoning effort in the wire format of each provider', async () => {
    const sent: Array<{ url: string; body: Record<string, unknown>; headers: Headers }> = [];
    const capture: typeof fetch = async (input, init) => {
      sent.push({ url: String(input), body: JSON.parse(String(init?.body)), headers: new Headers(init?.headers) });
      return new Response(JSON.stringify({ error: { message: 'captured' } }), { status: 400 });
    };
    const env = { ANTHROPIC_API_KEY: 'sk-ant-test-000000000000', GEMINI_API_KEY: 'AIza-test-0000000000000000' };
    const messages = [{ role: 'user' as const, content: 'hi' }];
    for (const provider of ['anthropic', 'google'] as const) {
      const model = await createKernelModel(
        { provider, model: provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gemini-2.5-pro', reasoningEffort: 'medium', maxOutputTokens: 8000 },
        { env, fetch: capture },
      );
      await assert.rejects(model.generate({ messages }), /HTTP 400: .*captured/);
    }
    const [anthropic, google] = sent;
    assert.deepEqual(anthropic?.body.thinking, { type: 'enabled', budget_tokens: 12288 });
    assert.equal(anthropic?.body.max_tokens, 8000 + 12288);
    assert.equal(anthropic?.headers.get('x-api-key'), env.ANTHROPIC_API_KEY);
    const generationConfig = google?.body.generationConfig as Record<string, unknown>;
    assert.deepEqual(generationConfig.thinkingConfig, { thinkingBudget: 12288, includeThoughts: true });
    assert.equal(google?.headers.get('x-goog-api-key'), env.GEMINI_API_KEY);
  });

  it('lists every key variable, for scrubbing child environments', () => {
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENROUTER_API_KEY']) {
      assert.ok(API_KEY_VARIABLES.includes(name), name);
    }
  });
});
