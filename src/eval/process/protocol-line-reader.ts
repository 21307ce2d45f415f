/** Longest fd-3 line accepted, in bytes: build-info carries up to 2 × 512 KiB of text. */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface ProtocolLineReaderOptions {
  onLine: (line: string) => void;
  /** Called once when a line grows past `maxLineBytes`; nothing more is read afterwards. */
  onOverflow: (lengthBytes: number) => void;
  maxLineBytes?: number;
}

/**
 * Splits the bytes of fd 3 into lines without holding more than one line's worth (bounded by
 * `maxLineBytes`), so a worker that writes without a newline cannot exhaust the parent's memory.
 */
export class ProtocolLineReader {
  readonly #options: ProtocolLineReaderOptions;
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #stopped = false;

  constructor(options: ProtocolLineReaderOptions) {
    this.#options = options;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Feeds a chunk; complete lines are delivered in order. */
  push(chunk: Buffer): void {
    let rest = chunk;
    while (!this.#stopped) {
      const newline = rest.indexOf(0x0a);
      if (newline === -1) {
        this.#hold(rest);
        return;
      }
      this.#hold(rest.subarray(0, newline));
      if (this.#stopped) return;
      const line = Buffer.concat(this.#pending).toString('utf8');
      this.#pending = [];
      this.#pendingBytes = 0;
      if (line.trim().length > 0) this.#options.onLine(line);
      rest = rest.subarray(newline + 1);
    }
  }

  /** Delivers a last line that had no newline (the worker exited mid-line). */
  end(): void {
    if (this.#stopped || this.#pendingBytes === 0) return;
    const line = Buffer.concat(this.#pending).toString('utf8');
    this.#pending = [];
    this.#pendingBytes = 0;
    if (line.trim().length > 0) this.#options.onLine(line);
  }

  /** Stops delivering lines (after a protocol error). */
  stop(): void {
    this.#stopped = true;
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes > this.#maxLineBytes) {
      const length = this.#pendingBytes;
      this.stop();
      this.#options.onOverflow(length);
      return;
    }
    this.#pending.push(bytes);
  }
}
