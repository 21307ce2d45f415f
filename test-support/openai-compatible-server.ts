import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token counts a scripted reply reports. Unset counts are estimated at 4 characters a token. */
export interface ScriptedUsage {
  promptTokens?: number;
  completionTokens?: number;
  reasoningTokens?: number;
}

/** A successful reply. */
export interface ScriptedReply {
  reply: string;
  /** Sent as `reasoning_content` (chat completions) or a reasoning summary (responses API). */
  reasoning?: string;
  usage?: ScriptedUsage;
  /** Chat-completions finish reason. Default `stop`. */
  finishReason?: string;
  /** Model id the server reports. Default: the one requested. */
  model?: string;
  /** Wait before answering, in milliseconds. */
  delayMs?: number;
}

/** An HTTP error answer. */
export interface ScriptedFailure {
  status: number;
  /** Sent as the `Retry-After` header, in seconds. */
  retryAfterSeconds?: number;
  message?: string;
}

/**
 * One step of the script, consumed by one request: a reply (a bare string is a reply text), an
 * HTTP error, `'hang'` (the request is held open, unanswered, until the client gives up or the
 * server closes) or `'reset'` (the connection is destroyed without an answer).
 */
export type ScriptedStep = string | ScriptedReply | ScriptedFailure | 'hang' | 'reset';

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  /** URL path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  /** Index of the script step that answered it (-1 when none did). */
  stepIndex: number;
}

export interface OpenAiCompatibleServerOptions {
  script: readonly ScriptedStep[];
  /** The server closes itself after this many milliseconds, whatever is pending. Default 60000. */
  lifetimeMs?: number;
}

/** A running scripted server. */
export interface OpenAiCompatibleServer {
  /** Base URL for SDK clients, `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Script steps not yet consumed. */
  remainingSteps(): number;
  /** Stops listening and drops every connection (hung ones included). Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks the non-streaming OpenAI chat
 * completions API (`POST /v1/chat/completions`) and the OpenAI responses API (`POST /v1/responses`)
 * from a script. Each request consumes the next step; when the script is used up, requests get a
 * 400 (not retryable) saying so. It never retries or improvises. It is for tests: everything it
 * answers is scripted, not a model's output.
 */
export async function startOpenAiCompatibleServer(options: OpenAiCompatibleServerOptions): Promise<OpenAiCompatibleServer> {
  const script = [...options.script];
  const requests: RecordedRequest[] = [];
  let nextStep = 0;
  let closed: Promise<void> | undefined;

  const server = createServer((request, response) => {
    void handle(request, response);
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const body = parseJson(raw);
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path,
      headers: flattenHeaders(request.headers),
      body,
      stepIndex: -1,
    };
    requests.push(recorded);

    const endpoint = path === '/v1/chat/completions' ? 'chat' : path === '/v1/responses' ? 'responses' : undefined;
    if (request.method !== 'POST' || endpoint === undefined) {
      sendError(response, 404, `no route for ${request.method} ${path}`);
      return;
    }
    if (body === undefined || typeof body !== 'object' || body === null) {
      sendError(response, 400, 'the request body is not a JSON object');
      return;
    }
    if ((body as { stream?: unknown }).stream === true) {
      sendError(response, 400, 'streaming is not scripted: this server answers non-streaming requests only');
      return;
    }
    if (nextStep >= script.length) {
      sendError(response, 400, `script exhausted: no step left for request ${requests.length}`);
      return;
    }
    recorded.stepIndex = nextStep;
    const step = script[nextStep++] as ScriptedStep;
    await answer(step, endpoint, body as Record<string, unknown>, recorded.stepIndex, request, response);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  const lifetime = setTimeout(() => void close(), options.lifetimeMs ?? 60_000);
  lifetime.unref();
  server.unref();

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remainingSteps: () => script.length - nextStep,
    close: async () => {
      clearTimeout(lifetime);
      await close();
    },
  };
}

async function answer(
  step: ScriptedStep,
  endpoint: 'chat' | 'responses',
  body: Record<string, unknown>,
  index: number,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (step === 'hang') return;
  if (step === 'reset') {
    request.socket.destroy();
    return;
  }
  if (typeof step === 'object' && 'status' in step) {
    const headers: Record<string, string> = step.retryAfterSeconds === undefined ? {} : { 'retry-after': String(step.retryAfterSeconds) };
    sendError(response, step.status, step.message ?? `scripted HTTP ${step.status}`, headers);
    return;
  }
  const reply: ScriptedReply = typeof step === 'string' ? { reply: step } : step;
  if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
  if (response.destroyed) return;
  const usage = {
    promptTokens: reply.usage?.promptTokens ?? Math.ceil(JSON.stringify(body.messages ?? body.input ?? '').length / 4),
    completionTokens: reply.usage?.completionTokens ?? Math.ceil((reply.reply.length + (reply.reasoning?.length ?? 0)) / 4),
    reasoningTokens: reply.usage?.reasoningTokens ?? Math.ceil((reply.reasoning?.length ?? 0) / 4),
  };
  const model = reply.model ?? (typeof body.model === 'string' ? body.model : 'scripted');
  const payload = endpoint === 'chat' ? chatCompletion(reply, usage, model, index) : responsesApiReply(reply, usage, model, index);
  sendJson(response, 200, payload);
}

function chatCompletion(reply: ScriptedReply, usage: Required<ScriptedUsage>, model: string, index: number) {
  return {
    id: `chatcmpl-scripted-${index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.reply,
          ...(reply.reasoning === undefined ? {} : { reasoning_content: reply.reasoning }),
        },
        finish_reason: reply.finishReason ?? 'stop',
      },
    ],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
      completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    },
  };
}

function responsesApiReply(reply: ScriptedReply, usage: Required<ScriptedUsage>, model: string, index: number) {
  const reasoning =
    reply.reasoning === undefined ? [] : [{ type: 'reasoning', id: `rs_scripted_${index}`, summary: [{ type: 'summary_text', text: reply.reasoning }] }];
  return {
    id: `resp_scripted_${index}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model,
    output: [
      ...reasoning,
      {
        type: 'message',
        id: `msg_scripted_${index}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: reply.reply, annotations: [] }],
      },
    ],
    incomplete_details: null,
    usage: {
      input_tokens: usage.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.completionTokens,
      output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
      total_tokens: usage.promptTokens + usage.completionTokens,
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}

function sendJson(response: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(payload));
}

function sendError(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  sendJson(response, status, { error: { message, type: 'scripted_error', code: String(status) } }, headers);
}
