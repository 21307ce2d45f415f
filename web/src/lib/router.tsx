import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';
import { forgetInitialAnswers } from './initial-data';

/** A tiny history-API router: the server answers every page URL with the app. */

const listeners = new Set<() => void>();

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  forgetInitialAnswers();
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.scrollTo(0, 0);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  forgetInitialAnswers();
  for (const listener of listeners) listener();
});

export interface Location {
  path: string;
  query: URLSearchParams;
}

const readLocation = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

/** The current path and query, re-rendering on navigation. */
export function useLocation(): Location {
  const [location, setLocation] = useState(readLocation);
  useEffect(() => {
    const update = (): void => setLocation(readLocation());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** A link that navigates without reloading; modified clicks open a tab as usual. */
export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>): void => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}

export const paths = {
  runs: () => '/',
  run: (runId: string) => `/runs/${encodeURIComponent(runId)}`,
  problem: (runId: string, problemHash: string, candidateId?: number | null) =>
    `/runs/${encodeURIComponent(runId)}/problems/${problemHash}${candidateId ? `?candidate=${candidateId}` : ''}`,
  compareCandidates: (a: number, b: number) => `/compare/candidates?a=${a}&b=${b}`,
  compareRuns: (a: string, b: string) => `/compare/runs?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`,
};
