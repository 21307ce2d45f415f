import type { FastifyRequest } from 'fastify';
import type { ZodApp } from './routes/server-context.js';

/** The id of the `<script type="application/json">` element that carries a page's first answers. */
export const INITIAL_DATA_ELEMENT_ID = 'kforge-initial-data';

/**
 * The API requests the first view of a page makes, by the page's path, as the web app spells
 * them: the runs list (`/`), and a run with the list it offers to compare with (`/runs/RUN`).
 * Other pages load their parts on demand and get none.
 */
export function initialRequests(pathname: string): string[] {
  const segments = pathname.split('/').filter(Boolean);
  if (segments.length === 0) return ['/api/runs'];
  if (segments[0] === 'runs' && segments.length === 2) {
    let runId: string;
    try {
      runId = decodeURIComponent(segments[1]!);
    } catch {
      return [];
    }
    return [`/api/runs/${encodeURIComponent(runId)}`, '/api/runs'];
  }
  return [];
}

/**
 * The answers to a page's first requests ({@link initialRequests}), asked of the server itself
 * (`inject`: the same routes, schemas and guard as the page's own requests would meet), by URL.
 * An answer other than 200 is left out: the page asks again and shows the error itself.
 */
export async function initialPageData(app: ZodApp, request: FastifyRequest): Promise<Record<string, unknown>> {
  const pathname = request.url.split('?')[0] ?? '/';
  const answers: Record<string, unknown> = {};
  for (const url of initialRequests(pathname)) {
    const response = await app.inject({ method: 'GET', url, headers: { host: request.headers.host ?? '127.0.0.1', accept: 'application/json' } });
    if (response.statusCode === 200) answers[url] = response.json();
  }
  return answers;
}

/**
 * The page with its first answers in a JSON data block before `</head>` (a data block is not
 * script: the page's Content-Security-Policy is unchanged). `<` is escaped, so nothing in the
 * data can end the element.
 */
export function embedInitialData(html: string, answers: Record<string, unknown>): string {
  if (Object.keys(answers).length === 0) return html;
  const json = JSON.stringify(answers).replace(/</g, '\\u003c');
  const block = `<script id="${INITIAL_DATA_ELEMENT_ID}" type="application/json">${json}</script>`;
  // A function, so that `$&` or `$'` in the data is not read as a replacement pattern. Without a
  // head, at the end: the app's module script runs once the whole document is parsed.
  return html.includes('</head>') ? html.replace('</head>', () => `${block}</head>`) : `${html}${block}`;
}
