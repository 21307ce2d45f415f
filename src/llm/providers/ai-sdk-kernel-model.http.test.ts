import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer, type ScriptedStep } from '../../../test-support/openai-compatible-server.js';
import { AiSdkKernelModel, type AiSdkKernelModelOptions } from './ai-sdk-kernel-model.js';
import { extractCandidate, isExtractionFailure } from '../replies/extract-code.js';
import type { ChatMessage } from '../kernel-model.js';
import { ModelCallError } from '../model-call-error.js';
import { createKernelModel } from './providers.js';

// Every reply below is scripted test data served by a loopback server, not a model's output.

const API_KEY = 'sk-test-loopback-0123456789abcdef';
const servers: OpenAiCompatibleServer[] = [];

async function serve(script: ScriptedStep[]): Promise<OpenAiCompatibleServer> {
  const server = await startOpenAiCompatibleServer({ script, lifetimeMs: 20_000 });
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function compatibleModel(server: OpenAiCompatibleServer, options: Partial<AiSdkKernelModelOptions> = {}) {
  const provider = createOpenAICompatible({ name: 'vllm', baseURL: server.baseUrl, apiKey: API_KEY, includeUsage: true });
  return new AiSdkKernelModel({
    model: provider.chatModel('Qwen/Qwen3-32B'),
    family: 'openai-compatible',
    provider: 'vllm',
    modelId: 'Qwen/Qwen3-32B',
    timeoutSeconds: 5,
    maxAttempts: 3,
    backoff: { initialDelayMs: 10, maxDelayMs: 2000 },
    secrets: [API_KEY],
    ...options,
  });
}

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You write fast kernels.' },
  { role: 'user', content: 'Write ModelNew for this Model.' },
];

const CANDIDATE = 'import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n';

describe('AiSdkKernelModel over HTTP (@ai-sdk/openai-compatible)', () => {
  it('returns the reply with usage, latency and the request it sent', async () => {
    const server = await serve([{ reply: `Here it is:\n\`\`\`python\n${CANDIDATE}\`\`\`\n`, usage: { promptTokens: 120, completionTokens: 80 } }]);
    const reply = await compatibleModel(server).generate({ messages: conversation, temperature: 0.3, maxOutputTokens: 900 });

    assert.equal(reply.usage.inputTokens, 120);
    assert.equal(reply.usage.outputTokens, 80);
    assert.equal(reply.provider, 'vllm');
    assert.equal(reply.modelId, 'Qwen/Qwen3-32B');
    assert.equal(reply.finishReason, 'stop');
    assert.equal(reply.attempts, 1);
    assert.deepEqual(reply.failedAttempts, []);
    assert.equal(reply.priced, false);
    assert.equal(reply.costUsd, 0);
    assert.ok(reply.latencyMs >= 0);
    assert.deepEqual(extractCandidate(reply.text), { code: CANDIDATE, language: 'python', from: 'fenced-block', blockCount: 1 });

    const [request] = server.requests;
    assert.equal(request?.path, '/v1/chat/completions');
    assert.equal(request?.headers.authorization, `Bearer ${API_KEY}`);
    const body = request?.body as Record<string, unknown>;
    assert.equal(body.model, 'Qwen/Qwen3-32B');
    assert.equal(body.temperature, 0.3);
    assert.equal(body.max_tokens, 900);
    assert.equal(body.stream, undefined);
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You write fast kernels.' },
      { role: 'user', content: 'Write ModelNew for this Model.' },
    ]);
  });

  it('keeps reasoning text and sends reasoning_effort', async () => {
    const server = await serve([{ reply: 'final answer', reasoning: 'Tile the reduction, then fuse the ReLU.', usage: { reasoningTokens: 9 } }]);
    const reply = await compatibleModel(server).generate({ messages: conversation, reasoningEffort: 'high' });
    assert.equal(reply.text, 'final answer');
    assert.equal(reply.reasoningText, 'Tile the reduction, then fuse the ReLU.');
    assert.equal(reply.usage.reasoningTokens, 9);
    assert.equal((server.requests[0]?.body as Record<string, unknown> | undefined)?.reasoning_effort, 'high');
  });

  it('retries a 429, honouring Retry-After, and records the failed attempt', async () => {
    const server = await serve([{ status: 429, retryAfterSeconds: 0.2, message: 'slow down' }, 'ok after 429']);
    const started = Date.now();
    const reply = await compatibleModel(server, { backoff: { initialDelayMs: 5, maxDelayMs: 2000 } }).generate({
      messages: conversation,
    });
    const elapsed = Date.now() - started;

    assert.equal(reply.text, 'ok after 429');
    assert.equal(reply.attempts, 2);
    assert.equal(reply.failedAttempts.length, 1);
    const [failed] = reply.failedAttempts;
    assert.equal(failed?.reason, 'rate-limited');
    assert.equal(failed?.statusCode, 429);
    assert.equal(failed?.isRetryable, true);
    assert.equal(failed?.waitedMs, 200);
    assert.match(failed?.message ?? '', /slow down/);
    assert.ok(elapsed >= 190, `waited ${elapsed} ms, expected the Retry-After of 200 ms`);
    assert.equal(server.requests.length, 2);
  });

  it('gives up after maxAttempts 500s with a ModelCallError', async () => {
    const server = await serve([{ status: 500 }, { status: 500 }, { status: 500 }, 'never reached']);
    const model = compatibleModel(server, { maxAttempts: 3 });
    const error = await model.generate({ messages: conversation }).then(
      () => assert.fail('expected a ModelCallError'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.provider, 'vllm');
    assert.equal(error.modelId, 'Qwen/Qwen3-32B');
    assert.equal(error.statusCode, 500);
    assert.equal(error.reason, 'server-error');
    assert.equal(error.isRetryable, true);
    assert.equal(error.attempts, 3);
    assert.equal(error.failedAttempts.length, 3);
    assert.deepEqual(
      error.failedAttempts.map((attempt) => attempt.waitedMs > 0),
      [true, true, false],
    );
    assert.match(error.message, /gave up after 3 attempt/);
    assert.equal(server.requests.length, 3);
    assert.equal(server.remainingSteps(), 1);
  });

  it('does not retry a 400', async () => {
    const server = await serve([{ status: 400, message: 'bad request' }, 'never reached']);
    const error = await compatibleModel(server)
      .generate({ messages: conversation })
      .catch((thrown: unknown) => thrown);
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.isRetryable, false);
    assert.equal(error.reason, 'client-error');
    assert.equal(error.attempts, 1);
    assert.equal(server.requests.length, 1);
  });

  it('times out a provider that hangs, within the configured seconds, then retries', async () => {
    const server = await serve(['hang', 'answer after the hang']);
    const started = Date.now();
    const reply = await compatibleModel(server, { timeoutSeconds: 0.5, maxAttempts: 2 }).generate({ messages: conversation });
    const elapsed = Date.now() - started;
    assert.equal(reply.text, 'answer after the hang');
    assert.equal(reply.failedAttempts[0]?.reason, 'timeout');
    assert.match(reply.failedAttempts[0]?.message ?? '', /time-out of 0.5 s/);
    assert.ok(elapsed >= 450 && elapsed < 5000, `took ${elapsed} ms`);
  });

  it('ends with a time-out ModelCallError when every attempt hangs', async () => {
    const server = await serve(['hang', 'hang']);
    const started = Date.now();
    const error = await compatibleModel(server, { timeoutSeconds: 0.3, maxAttempts: 2 })
      .generate({ messages: conversation })
      .catch((thrown: unknown) => thrown);
    const elapsed = Date.now() - started;
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.reason, 'timeout');
    assert.equal(error.attempts, 2);
    assert.ok(elapsed < 5000, `took ${elapsed} ms`);
  });

  it('retries a dropped connection', async () => {
    const server = await serve(['reset', 'after the reset']);
    const reply = await compatibleModel(server).generate({ messages: conversation });
    assert.equal(reply.text, 'after the reset');
    assert.equal(reply.failedAttempts[0]?.reason, 'network');
  });

  it('stops at once, without retrying, when the caller aborts', async () => {
    const server = await serve(['hang', 'never reached']);
    const controller = new AbortController();
    const pending = compatibleModel(server, { timeoutSeconds: 10 })
      .generate({ messages: conversation, signal: controller.signal })
      .catch((thrown: unknown) => thrown);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const abortedAt = Date.now();
    controller.abort();
    const error = await pending;
    assert.ok(Date.now() - abortedAt < 2000, 'the abort ends the call at once');
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.reason, 'aborted');
    assert.equal(error.isRetryable, false);
    assert.equal(server.requests.length, 1);
  });

  it('never puts the key in an error message or record', async () => {
    const server = await serve([{ status: 401, message: `Incorrect API key provided: ${API_KEY}` }]);
    const error = await compatibleModel(server)
      .generate({ messages: conversation })
      .catch((thrown: unknown) => thrown);
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.statusCode, 401);
    assert.doesNotMatch(error.message, /0123456789abcdef/);
    assert.doesNotMatch(JSON.stringify(error.toRecord()), /0123456789abcdef/);
    assert.match(error.message, /\[redacted\]/);
  });

  it('walks a search-like script: build failure, fix, faster version, no code, 429, hang', async () => {
    const slow = `\`\`\`python\n${CANDIDATE.replace('return x', 'return x.clone()')}\`\`\``;
    const server = await serve([
      '```python\nimport torch\nfrom torch.utils.cpp_extension import load_inline\nclass ModelNew(torch.nn.Module):\n    pass  # missing semicolon in cuda\n```',
      slow,
      `Faster:\n\`\`\`python\n${CANDIDATE}\`\`\``,
      'I think the kernel is already optimal; no changes needed.',
      { status: 429, retryAfterSeconds: 0 },
      `Sorry, here it is:\n\`\`\`python\n${CANDIDATE}\`\`\``,
      'hang',
    ]);
    const model = compatibleModel(server, { timeoutSeconds: 0.3, maxAttempts: 1 });
    const history: ChatMessage[] = [...conversation];
    const outcomes: string[] = [];
    const feedback = ['compile_error: expected ; before }', 'correct, 1.1x', 'correct, 1.9x'];
    for (let turn = 0; turn < 5; turn++) {
      const reply = await model.generate({ messages: history }).catch((error: unknown) => {
        if (error instanceof ModelCallError) return error;
        throw error;
      });
      if (reply instanceof ModelCallError) {
        outcomes.push(`error:${reply.reason}`);
        continue;
      }
      const extraction = extractCandidate(reply.text);
      history.push({ role: 'assistant', content: reply.text });
      const note = isExtractionFailure(extraction) ? extraction.message : (feedback[turn] ?? 'ok');
      outcomes.push(isExtractionFailure(extraction) ? extraction.error : 'code');
      history.push({ role: 'user', content: note });
    }
    assert.deepEqual(outcomes, ['code', 'code', 'code', 'no-code', 'error:rate-limited']);
    // The no-code reply was fed back to the model as a user message:
    const fourth = server.requests[4]?.body as { messages: ChatMessage[] };
    assert.match(fourth.messages.at(-1)?.content ?? '', /contained no code/);
    assert.equal(fourth.messages.length, 2 + 4 * 2);

    const fixed = await model.generate({ messages: history });
    assert.equal(isExtractionFailure(extractCandidate(fixed.text)), false);
    const hung = await model.generate({ messages: history }).catch((error: unknown) => error);
    assert.ok(hung instanceof ModelCallError);
    assert.equal(hung.reason, 'timeout');
  });
});

describe('candidates in replies served over HTTP, as the worker accepts them', () => {
  it('takes a KernelBench-Hard style class Model (with ModelNew = Model or without), and names both when a reply has neither', async () => {
    const ownModel = CANDIDATE.replace('class ModelNew(', 'class Model(');
    const aliased = `${ownModel}\n\nModelNew = Model\n`;
    const server = await serve([
      `Solution:\n\`\`\`python\n${ownModel}\`\`\`\n`,
      `\`\`\`python\n${aliased}\`\`\``,
      '```python\nimport torch\n\ndef relu(x):\n    return x.clamp_min(0)\n```',
    ]);
    const model = compatibleModel(server);
    const extractions = [];
    for (let turn = 0; turn < 3; turn++) extractions.push(extractCandidate((await model.generate({ messages: conversation })).text));
    assert.deepEqual(extractions.slice(0, 2), [
      { code: ownModel, language: 'python', from: 'fenced-block', blockCount: 1 },
      { code: aliased, language: 'python', from: 'fenced-block', blockCount: 1 },
    ]);
    const neither = extractions[2]!;
    assert.ok(isExtractionFailure(neither));
    assert.equal(neither.error, 'no-model-new');
    assert.match(neither.message, /none defines `class ModelNew` \(nor a `class Model` of its own, the name KernelBench-Hard solutions use\)/);
  });
});

describe('AiSdkKernelModel over HTTP (@ai-sdk/openai with a base URL)', () => {
  it('talks to the chat completions API', async () => {
    const server = await serve([{ reply: 'chat reply', usage: { promptTokens: 1000, completionTokens: 500 } }]);
    const model = new AiSdkKernelModel({
      model: createOpenAI({ apiKey: API_KEY, baseURL: server.baseUrl }).chat('gpt-4o'),
      family: 'openai',
      provider: 'openai',
      timeoutSeconds: 5,
    });
    const reply = await model.generate({ messages: conversation });
    assert.equal(reply.text, 'chat reply');
    assert.equal(reply.modelId, 'gpt-4o');
    assert.equal(reply.priced, true);
    // gpt-4o defaults: 2.5 USD / M input, 10 USD / M output.
    assert.ok(Math.abs(reply.costUsd - (1000 * 2.5 + 500 * 10) / 1e6) < 1e-12);
    assert.equal(server.requests[0]?.path, '/v1/chat/completions');
  });

  it('talks to the responses API through createKernelModel, keeping the reasoning summary', async () => {
    const server = await serve([
      { status: 503 },
      { reply: 'responses reply', reasoning: 'Use shared memory.', usage: { promptTokens: 10, completionTokens: 20, reasoningTokens: 5 } },
    ]);
    const model = await createKernelModel(
      { provider: 'openai', model: 'o4-mini', baseUrl: server.baseUrl, reasoningEffort: 'medium', maxAttempts: 2 },
      { env: { OPENAI_API_KEY: API_KEY }, sleep: async () => {} },
    );
    const reply = await model.generate({ messages: conversation });
    assert.equal(reply.text, 'responses reply');
    assert.equal(reply.reasoningText, 'Use shared memory.');
    assert.equal(reply.usage.reasoningTokens, 5);
    assert.equal(reply.attempts, 2);
    assert.equal(reply.failedAttempts[0]?.statusCode, 503);
    const body = server.requests[1]?.body as { reasoning?: { effort?: string; summary?: string }; instructions?: string };
    assert.equal(server.requests[1]?.path, '/v1/responses');
    assert.deepEqual(body.reasoning, { effort: 'medium', summary: 'auto' });
    assert.equal(server.requests[1]?.headers.authorization, `Bearer ${API_KEY}`);
  });
});
