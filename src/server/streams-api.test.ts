/**
 * The live streams over a real socket on loopback: server-sent events do not end, so they cannot
 * be read through `inject`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

interface ReceivedEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** An open event stream: events as they arrive, parsed. */
class StreamReader {
  readonly events: ReceivedEvent[] = [];
  readonly request: http.ClientRequest;
  status = 0;
  contentType = '';
  #buffer = '';

  constructor(url: string, headers: Record<string, string> = {}) {
    this.request = http.get(url, { headers }, (response) => {
      this.status = response.statusCode ?? 0;
      this.contentType = String(response.headers['content-type']);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => this.#feed(chunk));
    });
    this.request.on('error', () => undefined);
  }

  #feed(chunk: string): void {
    this.#buffer += chunk;
    let end = this.#buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const fields = new Map(
        block
          .split('\n')
          .filter((line) => !line.startsWith(':'))
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
      );
      if (fields.has('event'))
        this.events.push({ id: fields.get('id'), event: fields.get('event')!, data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown> });
      end = this.#buffer.indexOf('\n\n');
    }
  }

  /** Resolves once the response headers are in. */
  async opened(timeoutMs = 5000): Promise<void> {
    const started = Date.now();
    while (this.status === 0) {
      if (Date.now() - started > timeoutMs) throw new Error(`the stream did not open within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async waitFor(test: (event: ReceivedEvent) => boolean, timeoutMs = 5000): Promise<ReceivedEvent> {
    const started = Date.now();
    for (;;) {
      const found = this.events.find(test);
      if (found) return found;
      if (Date.now() - started > timeoutMs)
        throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(this.events.map((event) => event.event))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.request.destroy();
  }
}

const open: StreamReader[] = [];

/** A stream closed after each test, whatever the test's outcome. */
function stream(url: string, headers: Record<string, string> = {}): StreamReader {
  const reader = new StreamReader(url, headers);
  open.push(reader);
  return reader;
}

afterEach(() => {
  for (const reader of open.splice(0)) reader.close();
});

let seededStore: SeededTestStore;
let app: ZodApp;
let base = '';

before(async () => {
  seededStore = await openSeededTestStore();
  app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null, pollIntervalMs: 50, heartbeatMs: 100 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await app.close();
  await seededStore.cleanup();
});

describe('GET /api/stream/runs/:runId', () => {
  it('sends each new event of the run as it is stored, with its id', async () => {
    const reader = stream(`${base}/api/stream/runs/cpu-demo`);
    await reader.opened();
    assert.equal(reader.status, 200);
    assert.match(reader.contentType, /text\/event-stream/);
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(reader.events.length, 0, 'old events are not replayed without a cursor');
    const action = await seededStore.store.recordAction({ runId: 'cpu-demo', type: 'hint', note: 'watch the stream' });
    const received = await reader.waitFor((event) => event.data.type === 'action-recorded');
    assert.equal(received.event, 'run-event');
    assert.deepEqual(received.data.payload, { actionId: action.id, type: 'hint' });
    assert.equal(received.id, String(received.data.id));
  });

  it('resumes after Last-Event-ID, and after an afterId cursor', async () => {
    const events = await seededStore.store.listEvents('cpu-demo');
    const cursor = events.at(-3)!.id;
    const resumed = stream(`${base}/api/stream/runs/cpu-demo`, { 'last-event-id': String(cursor) });
    const first = await resumed.waitFor(() => true);
    assert.equal(Number(first.id), events.at(-2)!.id);
    resumed.close();
    const fromQuery = stream(`${base}/api/stream/runs/cpu-demo?afterId=${cursor}`);
    await fromQuery.waitFor(() => fromQuery.events.length >= 2);
    assert.deepEqual(
      fromQuery.events.slice(0, 2).map((event) => Number(event.id)),
      [events.at(-2)!.id, events.at(-1)!.id],
    );
    fromQuery.close();
  });

  it('answers 404 for an unknown run without opening a stream', async () => {
    const response = await fetch(`${base}/api/stream/runs/nope`);
    assert.equal(response.status, 404);
  });
});

describe('GET /api/stream/runs', () => {
  it('sends runs-changed when a run changes status', async () => {
    const reader = stream(`${base}/api/stream/runs`);
    await reader.opened();
    assert.equal(reader.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 2300));
    seededStore.clock.advance(1000);
    await seededStore.store.updateRunStatus('h200-demo', 'running');
    const changed = await reader.waitFor((event) => event.event === 'runs-changed', 6000);
    assert.equal(changed.data.runs, 2);
  });
});

describe('closing the server', () => {
  it('ends open streams so close does not hang', async () => {
    const extra = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null, pollIntervalMs: 50 });
    await extra.listen({ host: '127.0.0.1', port: 0 });
    const reader = stream(`http://127.0.0.1:${(extra.server.address() as AddressInfo).port}/api/stream/runs/cpu-demo`);
    await reader.opened();
    assert.equal(reader.status, 200);
    const started = Date.now();
    await extra.close();
    assert.ok(Date.now() - started < 2000);
  });
});
