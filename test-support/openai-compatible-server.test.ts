import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startOpenAiCompatibleServer } from './openai-compatible-server.js';

function post(url: string, body: unknown, signal?: AbortSignal) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

const chat = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };

describe('startOpenAiCompatibleServer', () => {
  it('listens on 127.0.0.1, answers in script order and records every request', async () => {
    const server = await startOpenAiCompatibleServer({
      script: [{ reply: 'first', reasoning: 'why', usage: { promptTokens: 3, completionTokens: 4, reasoningTokens: 1 } }, 'second'],
    });
    try {
      assert.match(server.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const first = (await (await post(`${server.baseUrl}/chat/completions`, chat)).json()) as {
        choices: Array<{ message: { content: string; reasoning_content?: string }; finish_reason: string }>;
        usage: { prompt_tokens: number; completion_tokens: number; completion_tokens_details: { reasoning_tokens: number } };
        model: string;
      };
      assert.equal(first.choices[0]?.message.content, 'first');
      assert.equal(first.choices[0]?.message.reasoning_content, 'why');
      assert.equal(first.choices[0]?.finish_reason, 'stop');
      assert.deepEqual([first.usage.prompt_tokens, first.usage.completion_tokens], [3, 4]);
      assert.equal(first.usage.completion_tokens_details.reasoning_tokens, 1);
      assert.equal(first.model, 'm');

      const second = (await (await post(`${server.baseUrl}/responses`, { model: 'm', input: 'x' })).json()) as {
        output: Array<{ type: string; content?: Array<{ text: string }> }>;
      };
      assert.equal(second.output.find((item) => item.type === 'message')?.content?.[0]?.text, 'second');

      assert.equal(server.requests.length, 2);
      assert.deepEqual(server.requests[0]?.body, chat);
      assert.equal(server.requests[0]?.headers.authorization, 'Bearer test');
      assert.deepEqual(
        server.requests.map((request) => [request.path, request.stepIndex]),
        [
          ['/v1/chat/completions', 0],
          ['/v1/responses', 1],
        ],
      );
      assert.equal(server.remainingSteps(), 0);
    } finally {
      await server.close();
    }
  });

  it('sends scripted HTTP errors with Retry-After', async () => {
    const server = await startOpenAiCompatibleServer({ script: [{ status: 429, retryAfterSeconds: 2 }, { status: 500 }] });
    try {
      const limited = await post(`${server.baseUrl}/chat/completions`, chat);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '2');
      const body = (await limited.json()) as { error: { message: string } };
      assert.match(body.error.message, /429/);
      assert.equal((await post(`${server.baseUrl}/chat/completions`, chat)).status, 500);
    } finally {
      await server.close();
    }
  });

  it('answers 400 once the script is used up, and to streaming requests, without consuming steps', async () => {
    const server = await startOpenAiCompatibleServer({ script: ['only'] });
    try {
      const streaming = await post(`${server.baseUrl}/chat/completions`, { ...chat, stream: true });
      assert.equal(streaming.status, 400);
      assert.match(await streaming.text(), /streaming is not scripted/);
      assert.equal((await post(`${server.baseUrl}/chat/completions`, chat)).status, 200);
      const exhausted = await post(`${server.baseUrl}/chat/completions`, chat);
      assert.equal(exhausted.status, 400);
      assert.match(await exhausted.text(), /script exhausted/);
      assert.equal((await post(`${server.baseUrl}/embeddings`, chat)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('holds a hanging request open until the server closes', async () => {
    const server = await startOpenAiCompatibleServer({ script: ['hang'] });
    const pending = post(`${server.baseUrl}/chat/completions`, chat).then(
      () => 'answered',
      () => 'dropped',
    );
    const early = await Promise.race([pending, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200))]);
    assert.equal(early, 'still waiting');
    await server.close();
    assert.equal(await pending, 'dropped');
  });

  it('closes itself after its lifetime, dropping what is pending', async () => {
    const server = await startOpenAiCompatibleServer({ script: ['hang'], lifetimeMs: 150 });
    const started = Date.now();
    const outcome = await post(`${server.baseUrl}/chat/completions`, chat).then(
      () => 'answered',
      () => 'dropped',
    );
    assert.equal(outcome, 'dropped');
    assert.ok(Date.now() - started < 2000);
    await server.close();
  });

  it('drops the connection for a reset step', async () => {
    const server = await startOpenAiCompatibleServer({ script: ['reset'] });
    try {
      await assert.rejects(post(`${server.baseUrl}/chat/completions`, chat));
    } finally {
      await server.close();
    }
  });
});
