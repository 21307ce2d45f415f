import type { ReactNode } from 'react';
import { Link, paths } from '../lib/router';
import type { StreamState } from '../lib/use-event-stream';

export interface Crumb {
  label: string;
  to?: string;
}

/** The dark bar on top: the name, where you are, and whether live updates arrive. */
export function TopBar({ crumbs, live, store }: { crumbs: Crumb[]; live?: StreamState | null; store?: string }) {
  return (
    <header className="topbar">
      <Link to={paths.runs()} className="brand">
        k<span>forge</span>
      </Link>
      <nav className="crumbs" aria-label="breadcrumbs">
        {crumbs.map((crumb, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a breadcrumb's place in the trail is its identity (the last one has no link).
          <span key={`${crumb.label}-${index}`} style={{ display: 'contents' }}>
            <span className="sep">/</span>
            {crumb.to && index < crumbs.length - 1 ? <Link to={crumb.to}>{crumb.label}</Link> : <span className="here">{crumb.label}</span>}
          </span>
        ))}
      </nav>
      <span className="spacer" />
      {store ? (
        <span className="store" title={store}>
          {store}
        </span>
      ) : null}
      {live ? (
        <span className={`live ${live === 'live' ? 'on' : ''}`}>{live === 'live' ? 'live' : live === 'connecting' ? 'connecting' : 'reconnecting…'}</span>
      ) : null}
    </header>
  );
}

export function Page({ crumbs, live, store, children }: { crumbs: Crumb[]; live?: StreamState | null; store?: string; children: ReactNode }) {
  return (
    <>
      <TopBar crumbs={crumbs} live={live ?? null} {...(store ? { store } : {})} />
      <main>{children}</main>
    </>
  );
}
