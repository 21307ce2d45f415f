/** Default cap on each of a worker's stdout and stderr: 1 MiB. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 1024 * 1024;

/**
 * Keeps the first `limitBytes` of a stream and counts the rest without storing it, so a candidate
 * that prints without end costs a fixed amount of memory.
 */
export class CappedOutput {
  readonly limitBytes: number;
  #chunks: Buffer[] = [];
  #keptBytes = 0;
  #droppedBytes = 0;

  constructor(limitBytes: number = DEFAULT_OUTPUT_LIMIT_BYTES) {
    this.limitBytes = limitBytes;
  }

  /** Appends a chunk; whatever lies past the limit is counted and dropped. */
  append(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const room = this.limitBytes - this.#keptBytes;
    if (room >= bytes.length) {
      this.#chunks.push(bytes);
      this.#keptBytes += bytes.length;
      return;
    }
    if (room > 0) {
      this.#chunks.push(bytes.subarray(0, room));
      this.#keptBytes += room;
    }
    this.#droppedBytes += bytes.length - Math.max(room, 0);
  }

  /** Bytes kept so far. */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** Bytes dropped past the limit so far. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** The kept bytes as UTF-8 text. */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}
