import { useState } from 'react';
import type { ResumeResponse, RunDetail, StopResponse } from '../../../src/server/api-types';
import { api } from '../lib/api';
import { withToken } from '../lib/token';
import { ActionButton } from './action-button';

/** A run's controls: stop it while it runs, resume it when it can be, download its report; says what the server answered. */
export function RunControls({ detail, onChanged }: { detail: RunDetail; onChanged: () => void }) {
  const { run } = detail;
  const [message, setMessage] = useState<string | null>(null);
  const base = `/api/runs/${encodeURIComponent(run.id)}`;
  const stop = async (): Promise<void> => {
    const answer = await api.post<StopResponse>(`${base}/stop`);
    setMessage(answer.acknowledged ? 'The run has stopped.' : 'Stop recorded: the search stops after its current step (the status changes when it does).');
    onChanged();
  };
  const resume = async (): Promise<void> => {
    const answer = await api.post<ResumeResponse>(`${base}/resume`, run.status === 'running' ? { force: true } : {});
    setMessage(`Resumed as process ${answer.pid ?? '?'}; its output goes to ${answer.logPath}.`);
    onChanged();
  };
  const canResume = run.resumable && run.status !== 'finished' && run.status !== 'running';
  return (
    <div style={{ display: 'flex', flexDirection: 'column', alignItems: 'flex-end', gap: 6 }}>
      <div className="actions">
        {run.status === 'running' ? (
          <ActionButton className="btn danger" onClick={stop} disabled={run.stopPending} testId="stop-run">
            {run.stopPending ? 'Stopping…' : 'Stop run'}
          </ActionButton>
        ) : null}
        {canResume ? (
          <ActionButton className="btn primary" onClick={resume} testId="resume-run">
            Resume run
          </ActionButton>
        ) : null}
        <span className="muted" style={{ marginLeft: 6 }}>
          Report:
        </span>
        {(['html', 'md', 'csv', 'json'] as const).map((format) => (
          <a key={format} className="btn small" href={withToken(`${base}/report?format=${format}&download=1`)}>
            {format}
          </a>
        ))}
      </div>
      {message ? (
        <span className="muted" role="status" style={{ fontSize: 12.5 }}>
          {message}
        </span>
      ) : null}
    </div>
  );
}
