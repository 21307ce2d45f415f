/**
 * An answer the API gives on purpose: an HTTP status, a stable `code` a client may branch on and a
 * message a person can act on. Anything else thrown in a handler is the server's own fault (500).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  readonly code: string;
  readonly field: string | undefined;

  constructor(statusCode: number, code: string, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.statusCode = statusCode;
    this.code = code;
    this.field = options.field;
  }

  static notFound(message: string): ApiError {
    return new ApiError(404, 'not-found', message);
  }

  static conflict(code: string, message: string): ApiError {
    return new ApiError(409, code, message);
  }
}
