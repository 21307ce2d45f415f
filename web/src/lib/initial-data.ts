/**
 * The API answers `kforge serve` put in the page for its first view (`<script
 * id="kforge-initial-data" type="application/json">`, src/server/initial-page-data.ts), by URL, so
 * that the first paint shows the runs instead of a spinner. None where the server needs a token.
 * They stand for the state of the store when the page was served: forgotten at the first
 * navigation, after which every view asks the API.
 */
let answers: ReadonlyMap<string, unknown> | null = readAnswers();

function readAnswers(): ReadonlyMap<string, unknown> | null {
  const text = document.getElementById('kforge-initial-data')?.textContent;
  if (!text) return null;
  try {
    return new Map(Object.entries(JSON.parse(text) as Record<string, unknown>));
  } catch {
    return null;
  }
}

/** The answer the page came with for `url`, while no navigation has happened; else undefined. */
export function initialAnswer<T>(url: string): T | undefined {
  return answers?.get(url) as T | undefined;
}

/** Drops the answers the page came with (the router calls it on every navigation). */
export function forgetInitialAnswers(): void {
  answers = null;
}
