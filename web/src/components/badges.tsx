import type { RunListItem } from '../../../src/server/api-types';
import { verdictColor, verdictLabel, type Verdict } from '../lib/verdicts';

export function VerdictBadge({ verdict, evaluating = false }: { verdict: Verdict | null; evaluating?: boolean }) {
  if (verdict === null) {
    return (
      <span className="badge outline">
        {evaluating ? (
          <>
            <span className="spinner" style={{ width: 10, height: 10 }} /> evaluating
          </>
        ) : (
          'not evaluated'
        )}
      </span>
    );
  }
  return (
    <span className="badge verdict" style={{ background: verdictColor(verdict) }}>
      {verdictLabel(verdict)}
    </span>
  );
}

export function StatusBadge({ status, stopPending = false }: { status: RunListItem['status']; stopPending?: boolean }) {
  return (
    <span className={`badge status-${status}`} title={stopPending ? 'a stop was asked for; the search stops after its current step' : undefined}>
      {status}
      {stopPending ? ' · stopping' : ''}
    </span>
  );
}

export function Dot({ verdict }: { verdict: Verdict | null }) {
  return <span className="node-dot" style={{ background: verdictColor(verdict) }} aria-hidden />;
}
