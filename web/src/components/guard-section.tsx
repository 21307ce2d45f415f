import type { GuardDetailsView } from '../../../src/server/api-types';

/**
 * What the guard found (docs/guard.md): static findings with their line (those already shown as
 * the verdict's reasons are not repeated), notes, and the run-time checks.
 */
export function GuardSection({ guard, reasons }: { guard: GuardDetailsView; reasons: ReadonlyArray<{ check: string; message: string }> }) {
  const shown = new Set(reasons.map((reason) => `${reason.check}\u0000${reason.message}`));
  const findings = guard.findings.filter((finding) => !shown.has(`${finding.check}\u0000${finding.message}`));
  const byCheck = new Map<string, { status: string; stages: string[]; message: string }>();
  for (const check of guard.checks) {
    const key = `${check.check}:${check.status}`;
    const known = byCheck.get(key);
    if (known) known.stages.push(check.stage);
    else byCheck.set(key, { status: check.status, stages: [check.stage], message: check.message });
  }
  return (
    <div data-testid="guard-section">
      <h3>
        Guard
        {guard.policy ? (
          <span className="faint" style={{ textTransform: 'none', letterSpacing: 0 }}>
            {' '}
            · policy {guard.policy}
          </span>
        ) : null}
      </h3>
      {findings.length === 0 && guard.notes.length === 0 && guard.checks.length === 0 ? (
        <p className="muted" style={{ margin: 0 }}>
          {guard.findings.length > 0 ? 'Its findings are the reasons above.' : 'No findings.'}
        </p>
      ) : null}
      {findings.map((finding, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the guard's findings as the server reported them, never reordered; two may be alike.
        <div key={index} className={finding.severity === 'reject' ? 'reason' : 'notice'} style={{ marginBottom: 6 }}>
          <span className="check mono" style={{ fontSize: 12 }}>
            {finding.check}
            {finding.line !== null ? ` · line ${finding.line}` : ''} · {finding.severity}
          </span>
          <div>{finding.message}</div>
        </div>
      ))}
      {guard.notes.map((note, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the guard's notes as the server reported them, never reordered; two may be alike.
        <div key={`note-${index}`} className="notice" style={{ marginBottom: 6 }}>
          {note}
        </div>
      ))}
      {byCheck.size > 0 ? (
        <p className="muted" style={{ margin: '4px 0 0', fontSize: 12.5 }}>
          Run-time checks:{' '}
          {[...byCheck.entries()].map(([key, check]) => (
            <span key={key} title={check.message} style={{ marginRight: 10, whiteSpace: 'nowrap' }}>
              <span style={{ color: check.status === 'passed' ? 'var(--ok)' : 'var(--muted)' }}>{check.status === 'passed' ? '✓' : '·'}</span>{' '}
              {key.split(':')[0]} <span className="faint">({check.stages.join(', ')})</span>
            </span>
          ))}
        </p>
      ) : null}
    </div>
  );
}
