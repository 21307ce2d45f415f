import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { embedInitialData, initialPageData } from './initial-page-data.js';
import type { ZodApp } from './routes/server-context.js';

/**
 * What the page may load: only this server (no CDN, no font service), styles inline for the
 * highlighter and the charts.
 */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>kforge: web app not built</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:640px;margin:64px auto;padding:0 20px;color:#1f2328}code{background:#f6f8fa;padding:2px 5px;border-radius:4px}</style></head>
<body><h1>The dashboard's web app is not built</h1>
<p>Build it once with <code>bash scripts/build-web.sh</code> (the install script <code>npm run setup</code> does it too), then reload this page.</p>
<p>The JSON API works without it: <a href="/api/runs">/api/runs</a>, described at <a href="/api/openapi.json">/api/openapi.json</a>.</p></body></html>`;

/** Decides what a GET that matched no route gets: the page (its router shows the view), or nothing. */
export type PageFallback = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | Promise<FastifyReply> | undefined;

/** Options of {@link registerWebApp}. */
export interface WebAppOptions {
  /**
   * Put the answers of a page's first API requests in the page itself (initial-page-data.ts), so
   * that its first paint shows the runs rather than "Loading runs…". Only where the API needs no
   * token: the page itself is served without one. Default false.
   */
  embedInitialData?: boolean;
}

/**
 * Serves the built web app from `webRoot` (hashed assets cached for a year, `index.html` never;
 * files are looked up per request, so a rebuild needs no restart), and returns the fallback that
 * answers every other page URL with `index.html`, with its first view's data where
 * `embedInitialData` says so. Without a build, page URLs get a page that says how to build it.
 */
export async function registerWebApp(app: ZodApp, webRoot: string | null, options: WebAppOptions = {}): Promise<PageFallback> {
  /** A page URL (not the API, not a missing asset: a missing script must not get HTML back). */
  const isPage = (request: FastifyRequest): boolean => {
    const pathname = request.url.split('?')[0] ?? '';
    return request.method === 'GET' && !pathname.startsWith('/api/') && !pathname.startsWith('/assets/') && !/\.[a-z0-9]+$/i.test(pathname);
  };
  if (webRoot === null) return () => undefined;
  const built = existsSync(path.join(webRoot, 'index.html'));
  if (!built) {
    return (request, reply) => (isPage(request) ? reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE) : undefined);
  }
  await app.register(fastifyStatic, {
    root: webRoot,
    prefix: '/',
    wildcard: true,
    index: false,
    schemaHide: true,
    cacheControl: false,
    setHeaders: (response, filePath) => {
      const immutable = filePath.includes(`${path.sep}assets${path.sep}`);
      response.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      response.setHeader('x-content-type-options', 'nosniff');
      if (filePath.endsWith('.html')) response.setHeader('content-security-policy', PAGE_CONTENT_SECURITY_POLICY);
    },
  });
  const root = webRoot;
  const sendPage = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    reply.header('content-security-policy', PAGE_CONTENT_SECURITY_POLICY).header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    if (!options.embedInitialData) return reply.sendFile('index.html');
    // Data the page could not get this way (a store that failed to answer) it asks for itself.
    const [html, answers] = await Promise.all([readFile(path.join(root, 'index.html'), 'utf8'), initialPageData(app, request).catch(() => ({}))]);
    return reply.send(embedInitialData(html, answers));
  };
  app.get('/', { schema: { hide: true } }, (request, reply) => sendPage(request, reply));
  return (request, reply) => (isPage(request) ? sendPage(request, reply) : undefined);
}
