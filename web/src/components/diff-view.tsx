import { useEffect, useState } from 'react';
import { unifiedDiff } from '../lib/unified-diff';

/**
 * The line diff of two sources through diff2html (loaded on demand): `line-by-line` for a narrow
 * panel, `side-by-side` for the comparison page.
 */
export function DiffView({
  before,
  after,
  names,
  layout = 'line-by-line',
}: {
  before: string;
  after: string;
  names: { before: string; after: string };
  layout?: 'line-by-line' | 'side-by-side';
}) {
  const [html, setHtml] = useState<string | null>(null);
  const diff = unifiedDiff(before, after, names);
  useEffect(() => {
    let cancelled = false;
    if (!diff) return;
    void Promise.all([import('diff2html'), import('diff2html/bundles/css/diff2html.min.css')]).then(([module]) => {
      if (cancelled) return;
      setHtml(module.html(diff, { outputFormat: layout, drawFileList: false, matching: 'lines', diffStyle: 'word' }));
    });
    return () => {
      cancelled = true;
    };
  }, [diff, layout]);
  if (!diff) return <p className="muted">The two sources are identical.</p>;
  if (html === null)
    return (
      <p className="muted">
        <span className="spinner" /> Preparing the diff…
      </p>
    );
  const added = diff.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).length;
  const removed = diff.split('\n').filter((line) => line.startsWith('-') && !line.startsWith('---')).length;
  return (
    <div>
      <p className="muted" style={{ margin: '0 0 8px' }} data-testid="diff-summary">
        <span style={{ color: 'var(--ok)' }}>+{added}</span> <span style={{ color: 'var(--danger)' }}>−{removed}</span> lines, {names.before} → {names.after}
      </p>
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: diff2html's output, which escapes the lines of both sources. */}
      <div className="code-frame" dangerouslySetInnerHTML={{ __html: html }} />
    </div>
  );
}
