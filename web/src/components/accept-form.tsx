import { useState } from 'react';
import type { CandidateDetail } from '../../../src/server/api-types';
import { api } from '../lib/api';
import { ActionButton } from './action-button';

/** The candidate's acceptance: a chip once accepted; for a correct kernel, a button that opens a note field and accepts it. */
export function AcceptForm({ detail, onDone }: { detail: CandidateDetail; onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState('');
  if (detail.acceptance) {
    return (
      <span className="chip accepted" title={`accepted ${detail.acceptance.createdAt}${detail.acceptance.note ? `: ${detail.acceptance.note}` : ''}`}>
        accepted{detail.acceptance.note ? `: ${detail.acceptance.note}` : ''}
      </span>
    );
  }
  if (detail.candidate.verdict !== 'correct') return null;
  if (!open)
    return (
      <button type="button" className="btn" onClick={() => setOpen(true)} data-testid="accept-open">
        Accept kernel…
      </button>
    );
  return (
    <span className="form-row" style={{ marginTop: 0 }}>
      <input
        type="text"
        // biome-ignore lint/a11y/noAutofocus: the field appears because the person just pressed "Accept kernel…"; focus follows their action.
        autoFocus
        placeholder="a note for whoever ships it (optional)"
        value={note}
        onChange={(event) => setNote(event.target.value)}
        style={{ width: 260 }}
        aria-label="acceptance note"
        data-testid="accept-note"
      />
      <button type="button" className="btn" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ActionButton
        className="btn primary"
        testId="accept"
        onClick={async () => {
          await api.post(`/api/candidates/${detail.candidate.id}/accept`, note.trim() ? { note: note.trim() } : {});
          onDone();
        }}
      >
        Accept
      </ActionButton>
    </span>
  );
}
