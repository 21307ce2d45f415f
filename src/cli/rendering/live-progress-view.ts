import { createLogUpdate } from 'log-update';
import type picocolors from 'picocolors';
import { RunProgress } from '../../agent/run/run-progress.js';
import type { SearchEvent } from '../../agent/search/state/search-events.js';
import { renderProgressFrame } from './progress-frame.js';

/** The terminal stream a live view draws on (process.stderr on a terminal). */
export interface TerminalStream {
  write(text: string): unknown;
  /** Width in cells; 80 when the stream does not say. */
  columns?: number;
  /** Height in lines; 24 when the stream does not say. */
  rows?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

export interface LiveProgressViewOptions {
  stream: TerminalStream;
  colors: ReturnType<typeof picocolors.createColors>;
  /** Clock in ms. Default `Date.now`. */
  now?: () => number;
  /** Redraw interval while nothing happens, so elapsed times tick on, in ms. Default 1000. */
  tickMs?: number;
  /** Least time between two redraws caused by events, in ms. Default 100 (a 200×50 frame costs log-update 20–100 ms on a busy 2-core machine). */
  minRedrawMs?: number;
}

/**
 * `kforge optimize`'s live view on a terminal: a frame of {@link renderProgressFrame} redrawn in
 * place by log-update on every event (at most every `minRedrawMs`), every `tickMs` so elapsed times
 * and stages move while a candidate builds, and when the terminal is resized.
 */
export class LiveProgressView {
  readonly #progress: RunProgress;
  readonly #render: ReturnType<typeof createLogUpdate>;
  readonly #options: Required<Omit<LiveProgressViewOptions, 'stream' | 'colors'>> & Pick<LiveProgressViewOptions, 'stream' | 'colors'>;
  readonly #timer: NodeJS.Timeout;
  readonly #onResize = (): void => this.#draw();
  #lastDrawMs = 0;
  #pending: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(options: LiveProgressViewOptions) {
    this.#options = { now: Date.now, tickMs: 1000, minRedrawMs: 100, ...options };
    this.#progress = new RunProgress(this.#options.now);
    this.#render = createLogUpdate(options.stream as NodeJS.WriteStream, { showCursor: false });
    this.#timer = setInterval(() => this.#draw(), this.#options.tickMs);
    this.#timer.unref();
    options.stream.on?.('resize', this.#onResize);
  }

  /** Takes one search event; the run's end stops the view, leaving its last frame on the screen. */
  readonly onEvent = (event: SearchEvent): void => {
    if (this.#stopped) return;
    this.#progress.update(event);
    if (event.type === 'run-finished') {
      this.stop();
      return;
    }
    this.#drawSoon();
  };

  /** Writes a line above the view (a notice), then redraws the view below it. */
  log(text: string): void {
    if (this.#stopped) {
      this.#options.stream.write(text);
      return;
    }
    this.#render.clear();
    this.#options.stream.write(text);
    this.#draw();
  }

  /** Draws the last frame and leaves it; later events are ignored. Safe to call twice. */
  stop(): void {
    if (this.#stopped) return;
    this.#draw();
    this.#stopped = true;
    clearInterval(this.#timer);
    if (this.#pending) clearTimeout(this.#pending);
    this.#options.stream.off?.('resize', this.#onResize);
    this.#render.done();
  }

  #drawSoon(): void {
    const wait = this.#lastDrawMs + this.#options.minRedrawMs - this.#options.now();
    if (wait <= 0) {
      this.#draw();
      return;
    }
    this.#pending ??= setTimeout(() => {
      this.#pending = null;
      this.#draw();
    }, wait);
  }

  #draw(): void {
    if (this.#stopped) return;
    const { stream, colors, now } = this.#options;
    this.#lastDrawMs = now();
    const size = { columns: stream.columns ?? 80, rows: stream.rows ?? 24 };
    this.#render(renderProgressFrame(this.#progress.snapshot(), size, this.#lastDrawMs, colors).join('\n'));
  }
}
