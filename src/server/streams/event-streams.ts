import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { SseConnection, type ServerSentEvent } from './sse-connection.js';

export interface EventStreamsOptions {
  /** How often each stream polls its source, in ms. */
  pollIntervalMs: number;
  heartbeatMs: number;
  logger: Logger;
}

/**
 * Produces what a stream should send next. Called every poll interval until the stream closes;
 * returns the events to send (possibly none) and whether to poll again at once (more waiting).
 */
export type StreamSource = () => Promise<{ events: ServerSentEvent[]; more?: boolean }>;

/**
 * The server's open live streams. Each polls the store on its own timer (the search writes from
 * another process, so polling the SQLite file is how news arrives) and all are ended when the
 * server closes.
 */
export class EventStreams {
  readonly #options: EventStreamsOptions;
  readonly #open = new Set<SseConnection>();

  constructor(options: EventStreamsOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Opens a stream on `reply` and pumps `source` into it until the client leaves or the server closes. */
  open(reply: FastifyReply, source: StreamSource, intervalMs = this.#options.pollIntervalMs): void {
    const connection = new SseConnection(reply);
    this.#open.add(connection);
    let timer: NodeJS.Timeout | undefined;
    const heartbeat = setInterval(() => connection.comment('heartbeat'), this.#options.heartbeatMs);
    const pump = async (): Promise<void> => {
      if (!connection.open) return;
      try {
        const { events, more } = await source();
        for (const event of events) connection.send(event);
        if (connection.open) timer = setTimeout(() => void pump(), more ? 0 : intervalMs);
      } catch (error) {
        this.#options.logger.error({ err: error }, 'a live stream failed; closing it');
        connection.send({ event: 'stream-error', data: { message: 'the server could not read the store; reload the page' } });
        connection.close();
      }
    };
    void pump();
    void connection.closed.then(() => {
      clearTimeout(timer);
      clearInterval(heartbeat);
      this.#open.delete(connection);
    });
  }

  /** Ends every open stream (clients reconnect to the next server). */
  closeAll(): void {
    for (const connection of this.#open) connection.close();
    this.#open.clear();
  }
}
