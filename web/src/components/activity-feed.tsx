import type { RunEventView } from '../../../src/server/api-types';

/** A sentence for an event, for people. */
function describe(event: RunEventView, names: ReadonlyMap<string, string>): string {
  const payload = event.payload as Record<string, unknown>;
  const problem = event.problemHash ? (names.get(event.problemHash) ?? event.problemHash.slice(0, 8)) : null;
  const on = problem ? ` on ${problem}` : '';
  switch (event.type) {
    case 'candidate-added':
      return `candidate #${String(payload.candidateId)} added${on}${payload.origin === 'human' ? ' by a person' : ''}`;
    case 'candidate-evaluated':
      return `candidate #${String(payload.candidateId)}: ${String(payload.verdict ?? 'evaluated').replace(/_/g, ' ')}${typeof payload.speedupVsBest === 'number' ? `, ${(payload.speedupVsBest as number).toFixed(2)}×` : ''}`;
    case 'candidate-evaluation-failed':
      return `candidate #${String(payload.candidateId)} could not be evaluated: ${String(payload.message)}`;
    case 'model-call-failed':
      // A replay (`--provider files`) that served its last reply ends so: its normal end, not a failure.
      return payload.exhausted === true ? `no replies left${on}` : `the model call failed${on}: ${String(payload.message)}`;
    case 'action-recorded':
      return `a person: ${String(payload.type)}${on}`;
    default:
      return `${event.type.replace(/-/g, ' ')}${on}`;
  }
}

/** The run's events, newest first. */
export function ActivityFeed({ events, names }: { events: readonly RunEventView[]; names: ReadonlyMap<string, string> }) {
  if (events.length === 0)
    return (
      <p className="muted" style={{ margin: 0 }}>
        Nothing has happened in this run yet.
      </p>
    );
  return (
    <div className="feed">
      <ul>
        {[...events].reverse().map((event) => (
          <li key={event.id}>
            <span className="when">{event.createdAt.slice(11, 19)}</span>
            <span>{describe(event, names)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
