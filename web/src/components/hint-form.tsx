import { useState } from 'react';
import type { ActionView } from '../../../src/server/api-types';
import { api } from '../lib/api';
import { ago } from '../lib/format';

/**
 * Hints a person gives the search: they go into the next prompts of one problem (or, without a
 * problem, of every problem of the run). Lists the hints already given.
 */
export function HintForm({ runId, problemHash, hints, onAdded }: { runId: string; problemHash?: string; hints: readonly ActionView[]; onAdded: () => void }) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const submit = async (): Promise<void> => {
    setBusy(true);
    setFailure(null);
    try {
      await api.post(`/api/runs/${encodeURIComponent(runId)}/hints`, { note, ...(problemHash ? { problemHash } : {}) });
      setNote('');
      onAdded();
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      {hints.length > 0 ? (
        <ul className="hint-list" data-testid="hint-list">
          {hints.map((hint) => (
            <li key={hint.id}>
              <div>{hint.note}</div>
              <div className="faint" style={{ fontSize: 12 }}>
                {hint.problemHash ? 'this problem' : 'every problem'} · {ago(hint.createdAt)}
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted" style={{ marginTop: 0 }}>
          No hints yet. A hint goes into the next prompts {problemHash ? 'for this problem' : 'for every problem of the run'}.
        </p>
      )}
      <textarea
        className="note"
        placeholder={problemHash ? 'e.g. the input is contiguous; vectorise in chunks of 8' : 'a hint for every problem of this run'}
        value={note}
        onChange={(event) => setNote(event.target.value)}
        aria-label="hint"
        data-testid="hint-input"
      />
      <div className="form-row" style={{ marginTop: 6 }}>
        <button type="button" className="btn" disabled={busy || note.trim() === ''} onClick={() => void submit()} data-testid="add-hint">
          Add hint
        </button>
        {failure ? (
          <span className="error-text" role="alert">
            {failure}
          </span>
        ) : null}
      </div>
    </div>
  );
}
