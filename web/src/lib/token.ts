/**
 * The API token when `kforge serve` needs one: it prints a URL ending in `#token=…`; the page
 * keeps the token for the tab's lifetime and takes it out of the address bar (the fragment is
 * never sent to the server, so it does not reach logs).
 */
const KEY = 'kforge-token';

let token: string | null = null;

/** Reads `#token=` from the URL once, at start-up. */
export function captureToken(): void {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match?.[1]) {
    token = decodeURIComponent(match[1]);
    sessionStorage.setItem(KEY, token);
    const rest = window.location.hash.replace(/(^#|&)token=[^&]+/, '').replace(/^#&?$/, '');
    history.replaceState(history.state, '', `${window.location.pathname}${window.location.search}${rest}`);
    return;
  }
  token = sessionStorage.getItem(KEY);
}

export function currentToken(): string | null {
  return token;
}

/** `url` with `token=` added, for requests that cannot carry a header (event streams, downloads). */
export function withToken(url: string): string {
  if (!token) return url;
  return `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}
