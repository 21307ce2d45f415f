import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APICallError } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { AiSdkKernelModel, type AiSdkKernelModelOptions } from './ai-sdk-kernel-model.js';
import type { ChatMessage, FailedAttempt } from '../kernel-model.js';
import { ModelCallError } from '../model-call-error.js';
import type { ProviderFamily } from './provider-presets.js';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type CallOptions = MockLanguageModelV3['doGenerateCalls'][number];

function result(
  text: string,
  options: { reasoning?: string; input?: number; output?: number; reasoningTokens?: number; modelId?: string } = {},
): GenerateResult {
  const input = options.input ?? 10;
  const output = options.output ?? 20;
  return {
    content: [...(options.reasoning ? [{ type: 'reasoning' as const, text: options.reasoning }] : []), { type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
      outputTokens: { total: output, text: output - (options.reasoningTokens ?? 0), reasoning: options.reasoningTokens },
    },
    ...(options.modelId ? { response: { modelId: options.modelId } } : {}),
    warnings: [],
  };
}

function apiError(statusCode: number, headers: Record<string, string> = {}) {
  return new APICallError({
    message: `scripted ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
  });
}

/** A mock SDK model answering from a list: results are returned, errors thrown. */
function scriptedMock(steps: Array<GenerateResult | Error>, modelId = 'mock-model') {
  let index = 0;
  return new MockLanguageModelV3({
    provider: 'mock.chat',
    modelId,
    doGenerate: async () => {
      const step = steps[index++];
      if (step === undefined) throw new Error('mock script exhausted');
      if (step instanceof Error) throw step;
      return step;
    },
  });
}

function kernelModel(mock: MockLanguageModelV3, options: Partial<AiSdkKernelModelOptions> = {}) {
  const sleeps: number[] = [];
  const model = new AiSdkKernelModel({
    model: mock,
    family: 'openai-compatible',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    ...options,
  });
  return { model, sleeps };
}

const messages: ChatMessage[] = [{ role: 'user', content: 'Write ModelNew.' }];

describe('AiSdkKernelModel with the SDK mock model', () => {
  const cases: Array<[ProviderFamily, Record<string, unknown>]> = [
    ['openai', { openai: { reasoningEffort: 'high', reasoningSummary: 'auto' } }],
    ['anthropic', { anthropic: { thinking: { type: 'enabled', budgetTokens: 24576 } } }],
    ['google', { google: { thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } } }],
    ['openai-compatible', { openaiCompatible: { reasoningEffort: 'high' } }],
  ];
  for (const [family, expected] of cases) {
    it(`maps reasoning effort for ${family}`, async () => {
      const mock = scriptedMock([result('ok')]);
      await kernelModel(mock, { family }).model.generate({ messages, reasoningEffort: 'high' });
      assert.deepEqual(mock.doGenerateCalls[0]?.providerOptions, expected);
    });
  }

  it('sends no provider options when no effort is set', async () => {
    const mock = scriptedMock([result('ok')]);
    await kernelModel(mock, { family: 'anthropic' }).model.generate({ messages });
    assert.equal(mock.doGenerateCalls[0]?.providerOptions, undefined);
  });

  it('applies defaults, and lets the request override them', async () => {
    const mock = scriptedMock([result('a'), result('b')]);
    const { model } = kernelModel(mock, { defaults: { temperature: 0.7, maxOutputTokens: 4000, reasoningEffort: 'low' } });
    await model.generate({ messages });
    await model.generate({ messages, temperature: 0, maxOutputTokens: 100, reasoningEffort: 'medium' });
    const [first, second] = mock.doGenerateCalls as [CallOptions, CallOptions];
    assert.equal(first.temperature, 0.7);
    assert.equal(first.maxOutputTokens, 4000);
    assert.deepEqual(first.providerOptions, { openaiCompatible: { reasoningEffort: 'low' } });
    assert.equal(second.temperature, 0);
    assert.equal(second.maxOutputTokens, 100);
    assert.deepEqual(second.providerOptions, { openaiCompatible: { reasoningEffort: 'medium' } });
  });

  it('turns off the SDK retries and passes an abort signal', async () => {
    const mock = scriptedMock([apiError(500)]);
    await kernelModel(mock, { maxAttempts: 1 })
      .model.generate({ messages })
      .catch(() => undefined);
    assert.equal(mock.doGenerateCalls.length, 1, 'the SDK must not retry on its own');
    assert.ok(mock.doGenerateCalls[0]?.abortSignal instanceof AbortSignal);
  });

  it('sends leading system messages as the system prompt and keeps the conversation order', async () => {
    const mock = scriptedMock([result('ok')]);
    await kernelModel(mock).model.generate({
      messages: [
        { role: 'system', content: 'rules' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        { role: 'user', content: 'second' },
      ],
    });
    const prompt = mock.doGenerateCalls[0]?.prompt ?? [];
    assert.deepEqual(
      prompt.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(prompt[0]?.content, 'rules');
  });

  it('reports text, reasoning, usage, cost and the served model id', async () => {
    const mock = scriptedMock([
      result('answer', { reasoning: 'thinking', input: 2_000_000, output: 1_000_000, reasoningTokens: 400_000, modelId: 'gpt-4o-2024-08-06' }),
    ]);
    const { model } = kernelModel(mock, { provider: 'openai', modelId: 'gpt-4o', family: 'openai' });
    const reply = await model.generate({ messages });
    assert.equal(reply.text, 'answer');
    assert.equal(reply.reasoningText, 'thinking');
    assert.deepEqual(reply.usage, { inputTokens: 2_000_000, outputTokens: 1_000_000, reasoningTokens: 400_000 });
    assert.equal(reply.costUsd, 2 * 2.5 + 1 * 10);
    assert.equal(reply.priced, true);
    assert.equal(reply.provider, 'openai');
    assert.equal(reply.modelId, 'gpt-4o');
    assert.equal(reply.responseModelId, 'gpt-4o-2024-08-06');
    assert.deepEqual(model.describe(), { provider: 'openai', modelId: 'gpt-4o' });
  });

  it('backs off exponentially with jitter between retryable failures', async () => {
    const mock = scriptedMock([apiError(500), apiError(502), apiError(503), result('ok')]);
    const { model, sleeps } = kernelModel(mock, {
      maxAttempts: 4,
      backoff: { initialDelayMs: 1000, factor: 2, maxDelayMs: 60_000 },
      random: () => 0.5,
    });
    const reply = await model.generate({ messages });
    assert.equal(reply.attempts, 4);
    // equal jitter: exponential/2 + 0.5 * exponential/2
    assert.deepEqual(sleeps, [750, 1500, 3000]);
    assert.deepEqual(
      reply.failedAttempts.map((attempt) => attempt.statusCode),
      [500, 502, 503],
    );
  });

  it('waits what Retry-After asks, capped at maxDelayMs', async () => {
    const mock = scriptedMock([
      apiError(429, { 'retry-after': '2' }),
      apiError(429, { 'retry-after-ms': '150' }),
      apiError(429, { 'retry-after': '3600' }),
      result('ok'),
    ]);
    const { model, sleeps } = kernelModel(mock, { maxAttempts: 4, backoff: { maxDelayMs: 30_000 } });
    await model.generate({ messages });
    assert.deepEqual(sleeps, [2000, 150, 30_000]);
  });

  it('does not retry non-retryable errors', async () => {
    for (const error of [apiError(400), apiError(401), apiError(404), new Error('programming fault')]) {
      const mock = scriptedMock([error, result('never')]);
      const thrown = await kernelModel(mock, { maxAttempts: 5 })
        .model.generate({ messages })
        .catch((e: unknown) => e);
      assert.ok(thrown instanceof ModelCallError);
      assert.equal(thrown.isRetryable, false);
      assert.equal(thrown.attempts, 1);
      assert.equal(thrown.cause, error);
      assert.equal(mock.doGenerateCalls.length, 1);
    }
  });

  it('retries network errors flagged retryable by the SDK', async () => {
    const network = new APICallError({
      message: 'Cannot connect to API: other side closed',
      url: 'http://127.0.0.1',
      requestBodyValues: {},
      isRetryable: true,
    });
    const mock = scriptedMock([network, result('ok')]);
    const reply = await kernelModel(mock).model.generate({ messages });
    assert.equal(reply.failedAttempts[0]?.reason, 'network');
  });

  it('reports every failed attempt to onAttemptFailed', async () => {
    const seen: FailedAttempt[] = [];
    const mock = scriptedMock([apiError(500), apiError(500)]);
    const { model } = kernelModel(mock, { maxAttempts: 2, onAttemptFailed: (attempt) => seen.push(attempt) });
    await model.generate({ messages }).catch(() => undefined);
    assert.deepEqual(
      seen.map((attempt) => attempt.attempt),
      [1, 2],
    );
  });

  it('times out an attempt that does not answer', async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: (options) =>
        new Promise((_resolve, reject) => {
          options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason));
        }),
    });
    const started = Date.now();
    const thrown = await kernelModel(mock, { timeoutSeconds: 0.2, maxAttempts: 2 })
      .model.generate({ messages })
      .catch((e: unknown) => e);
    assert.ok(thrown instanceof ModelCallError);
    assert.equal(thrown.reason, 'timeout');
    assert.equal(thrown.isRetryable, true);
    assert.equal(thrown.attempts, 2);
    assert.ok(Date.now() - started < 2000);
  });

  it('stops waiting to retry when the caller aborts', async () => {
    const controller = new AbortController();
    const mock = scriptedMock([apiError(503), result('never')]);
    const model = new AiSdkKernelModel({
      model: mock,
      family: 'openai-compatible',
      backoff: { initialDelayMs: 60_000 },
    });
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const thrown = await model.generate({ messages, signal: controller.signal }).catch((e: unknown) => e);
    assert.ok(thrown instanceof ModelCallError);
    assert.equal(thrown.reason, 'aborted');
    assert.equal(mock.doGenerateCalls.length, 1);
    assert.ok(Date.now() - started < 2000);
  });

  it('does not call the model when the signal is already aborted', async () => {
    const mock = scriptedMock([result('never')]);
    const thrown = await kernelModel(mock)
      .model.generate({ messages, signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    assert.ok(thrown instanceof ModelCallError);
    assert.equal(thrown.reason, 'aborted');
    assert.equal(mock.doGenerateCalls.length, 0);
  });
});

describe('AiSdkKernelModel: the wait between attempts', () => {
  it("the default wait (node:timers/promises) ends at once when the caller aborts, with the caller's reason", async () => {
    const model = new AiSdkKernelModel({
      model: scriptedMock([apiError(503), result('late')]),
      family: 'openai-compatible',
      backoff: { initialDelayMs: 60_000, factor: 2, maxDelayMs: 60_000 },
      random: () => 0,
    });
    const controller = new AbortController();
    const startedAt = Date.now();
    setTimeout(() => controller.abort(new Error('stopped by the run')), 50);
    await assert.rejects(model.generate({ messages, signal: controller.signal }), (error: unknown) => {
      assert.ok(error instanceof ModelCallError);
      assert.match(error.message, /cancelled by its caller while waiting to retry/);
      return true;
    });
    assert.ok(Date.now() - startedAt < 10_000, 'it did not wait out the 30 s backoff');
  });
});
