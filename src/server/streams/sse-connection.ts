import type { FastifyReply } from 'fastify';

/** One server-sent event. `data` is sent as JSON. */
export interface ServerSentEvent {
  /** Becomes the client's `Last-Event-ID` when it reconnects. */
  id?: number | string;
  event: string;
  data: unknown;
}

/**
 * A `text/event-stream` response on a hijacked fastify reply. Writes are dropped once the client
 * has gone; `closed` resolves when either side ends the stream.
 */
export class SseConnection {
  readonly #reply: FastifyReply;
  #open = true;
  readonly closed: Promise<void>;

  constructor(reply: FastifyReply, headers: Record<string, string> = {}) {
    this.#reply = reply;
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    this.closed = new Promise((resolve) => {
      const done = (): void => {
        this.#open = false;
        resolve();
      };
      reply.raw.once('close', done);
      reply.raw.once('error', done);
    });
    reply.raw.write('retry: 2000\n\n');
  }

  get open(): boolean {
    return this.#open && !this.#reply.raw.writableEnded;
  }

  send(message: ServerSentEvent): void {
    if (!this.open) return;
    const id = message.id === undefined ? '' : `id: ${message.id}\n`;
    const data = JSON.stringify(message.data).replace(/\n/g, '\\n');
    this.#reply.raw.write(`${id}event: ${message.event}\ndata: ${data}\n\n`);
  }

  /** A comment line: keeps proxies from closing an idle stream. */
  comment(text: string): void {
    if (this.open) this.#reply.raw.write(`: ${text}\n\n`);
  }

  close(): void {
    if (this.open) this.#reply.raw.end();
    this.#open = false;
  }
}
