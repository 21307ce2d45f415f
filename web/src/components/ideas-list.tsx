import type { IdeaView } from '../../../src/server/api-types';
import { api } from '../lib/api';
import { ActionButton } from './action-button';

/** The ideas strategy's ideas for a problem, each with pin (keep exploring) and drop. */
export function IdeasList({ ideas, onChanged }: { ideas: readonly IdeaView[]; onChanged: () => void }) {
  if (ideas.length === 0)
    return (
      <p className="muted" style={{ margin: 0 }}>
        No ideas: this run's strategy does not propose them, or it has not yet.
      </p>
    );
  const act = (idea: IdeaView, verb: 'pin' | 'drop') => async () => {
    await api.post(`/api/ideas/${idea.id}/${verb}`, {});
    onChanged();
  };
  return (
    <div>
      {ideas.map((idea) => (
        <div className="idea-row" key={idea.id} title={idea.text} data-testid={`idea-${idea.label}`}>
          <div className="top">
            <span className="chip idea">{idea.label}</span>
            <span
              className="badge outline"
              style={
                idea.status === 'pinned'
                  ? { color: 'var(--accent)', borderColor: 'var(--accent)' }
                  : idea.status === 'dropped'
                    ? { textDecoration: 'line-through' }
                    : undefined
              }
            >
              {idea.status}
            </span>
            {idea.status !== 'pinned' ? (
              <ActionButton className="btn small" onClick={act(idea, 'pin')} title="keep exploring this idea in later rounds">
                Pin
              </ActionButton>
            ) : null}
            {idea.status !== 'dropped' ? (
              <ActionButton className="btn small danger" onClick={act(idea, 'drop')} title="explore this idea no further">
                Drop
              </ActionButton>
            ) : null}
          </div>
          <div className="text">{idea.text}</div>
        </div>
      ))}
    </div>
  );
}
