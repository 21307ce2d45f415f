import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

export interface RequestGuardOptions {
  /** When set, every `/api` request must carry it (see {@link tokenOf}). */
  token?: string | undefined;
  /**
   * Host names the `Host` header may name (any port); others are refused, which stops DNS
   * rebinding against a server on loopback. Empty: any host (a server bound elsewhere relies on
   * its token).
   */
  allowedHostNames?: readonly string[];
}

/** The names a browser uses for this machine's loopback interface. */
export const LOOPBACK_HOST_NAMES = ['localhost', '127.0.0.1', '[::1]', '::1'] as const;

/** Host name of a `Host` header, without the port: `[::1]:4319` → `[::1]`. */
export function hostNameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  return value.split(':')[0] ?? '';
}

/**
 * The token a request presents: `Authorization: Bearer <token>`, an `x-kforge-token` header, or
 * a `token` query parameter (for `EventSource` and download links, which cannot set headers).
 */
export function tokenOf(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice('Bearer '.length).trim();
  const header = request.headers['x-kforge-token'];
  if (typeof header === 'string') return header;
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.token === 'string' ? query.token : undefined;
}

/** Equal strings, compared in constant time (by their digests, so lengths do not leak either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Checks each request before routing: the `Host` header against the allowed names, the token on
 * `/api` routes, and, for writes, that a browser's `Origin` (when sent) is this server's own.
 * The web app's static files need no token: they hold no data.
 */
export function installRequestGuard(app: FastifyInstance, options: RequestGuardOptions): void {
  const allowed = new Set((options.allowedHostNames ?? []).map((name) => name.toLowerCase()));
  app.addHook('onRequest', async (request) => {
    const host = request.headers.host ?? '';
    if (allowed.size > 0 && !allowed.has(hostNameOf(host))) {
      throw new ApiError(403, 'forbidden-host', `this server answers only to ${[...allowed].join(', ')}; open it through one of those names`);
    }
    if (!request.url.startsWith('/api/')) return;
    if (options.token !== undefined) {
      const given = tokenOf(request);
      if (given === undefined)
        throw new ApiError(
          401,
          'token-required',
          'this server needs its token: open the URL `kforge serve` printed (it carries #token=…), or send `Authorization: Bearer <token>`',
        );
      if (!sameSecret(given, options.token)) throw new ApiError(401, 'token-invalid', 'the token does not match the one `kforge serve` printed');
    }
    const origin = request.headers.origin;
    if (request.method !== 'GET' && request.method !== 'HEAD' && origin !== undefined && origin !== 'null') {
      let originHost = '';
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        originHost = '';
      }
      if (originHost !== host.toLowerCase()) throw new ApiError(403, 'forbidden-origin', `a page from ${origin} may not change this server's runs`);
    }
  });
}
