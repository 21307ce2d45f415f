import { useState, type KeyboardEvent } from 'react';
import type { EditResponse } from '../../../src/server/api-types';
import { api } from '../lib/api';

/** Tab in the editor inserts four spaces at the cursor (replacing a selection) instead of leaving the field. */
function indentOnTab(event: KeyboardEvent<HTMLTextAreaElement>, text: string, setText: (text: string) => void): void {
  if (event.key !== 'Tab') return;
  event.preventDefault();
  const area = event.currentTarget;
  const { selectionStart, selectionEnd } = area;
  const next = `${text.slice(0, selectionStart)}    ${text.slice(selectionEnd)}`;
  setText(next);
  requestAnimationFrame(() => area.setSelectionRange(selectionStart + 4, selectionStart + 4));
}

/**
 * Edit a candidate's code and evaluate it as a new candidate: a child of this one, marked as
 * written by a person, judged under the run's own evaluation settings.
 */
export function CandidateEditor({ candidateId, source, onSubmitted }: { candidateId: number; source: string; onSubmitted: (edit: EditResponse) => void }) {
  const [text, setText] = useState(source);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const changed = text !== source;
  const submit = async (): Promise<void> => {
    setBusy(true);
    setFailure(null);
    try {
      onSubmitted(await api.post<EditResponse>(`/api/candidates/${candidateId}/edits`, { source: text, ...(note.trim() ? { note: note.trim() } : {}) }));
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <p className="muted" style={{ marginTop: 0 }}>
        Edit the file and evaluate it: it becomes a new candidate, a child of #{candidateId} marked as written by a person, judged with the run's settings. The
        search sees it like any other candidate.
      </p>
      <textarea
        className="editor"
        spellCheck={false}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => indentOnTab(event, text, setText)}
        aria-label="candidate source"
        data-testid="candidate-editor"
      />
      <div className="form-row">
        <input
          type="text"
          placeholder="What did you change? (optional note)"
          value={note}
          onChange={(event) => setNote(event.target.value)}
          aria-label="edit note"
        />
        <button type="button" className="btn" disabled={!changed || busy} onClick={() => setText(source)}>
          Revert
        </button>
        <button type="button" className="btn primary" disabled={!changed || busy} onClick={() => void submit()} data-testid="evaluate-edit">
          {busy ? <span className="spinner" style={{ width: 12, height: 12 }} /> : null}Evaluate as new candidate
        </button>
      </div>
      {!changed ? (
        <p className="faint" style={{ margin: '6px 0 0' }}>
          Change the code to evaluate it.
        </p>
      ) : null}
      {failure ? (
        <p className="error-text" role="alert">
          {failure}
        </p>
      ) : null}
    </div>
  );
}
