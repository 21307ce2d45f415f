import type { ReactNode } from 'react';
import { ApiRequestError } from '../lib/api';
import { Link, paths } from '../lib/router';

/** While the first answer is on its way. */
export function Loading({ what }: { what: string }) {
  return (
    <div className="state" role="status">
      <span className="spinner" /> Loading {what}…
    </div>
  );
}

/** What went wrong and what to do about it, with a retry. */
export function ErrorState({ error, retry, what }: { error: Error; retry?: () => void; what: string }) {
  const status = error instanceof ApiRequestError ? error.status : 0;
  const hint =
    status === 0
      ? 'Check that `kforge serve` is still running, then retry.'
      : status === 401
        ? 'Open the URL `kforge serve` printed: it carries the token (#token=…).'
        : status === 404
          ? 'It may belong to another store: `kforge serve --store PATH` picks the store.'
          : null;
  return (
    <div className="state error" role="alert">
      <h2>Could not load {what}</h2>
      <p>{error.message}</p>
      {hint ? <p className="muted">{hint}</p> : null}
      <div className="actions" style={{ justifyContent: 'center' }}>
        {retry && status !== 404 ? (
          <button type="button" className="btn" onClick={retry}>
            Retry
          </button>
        ) : null}
        <Link className="btn" to={paths.runs()}>
          All runs
        </Link>
      </div>
    </div>
  );
}

/** Nothing to show yet, and the command or step that changes that. */
export function Empty({ title, children, command }: { title: string; children?: ReactNode; command?: string }) {
  return (
    <div className="state">
      <h2>{title}</h2>
      {children}
      {command ? <pre>{command}</pre> : null}
    </div>
  );
}
