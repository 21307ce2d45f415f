import { useEffect, useState } from 'react';
import type { ResumeResponse, RunDetail, RunEventView, RunList, StopResponse } from '../../../src/server/api-types';
import { ActionButton } from '../components/action-button';
import { ActivityFeed } from '../components/activity-feed';
import { StatusBadge, VerdictBadge } from '../components/badges';
import { HintForm } from '../components/hint-form';
import { Page } from '../components/layout';
import { ErrorState, Loading } from '../components/states';
import { api } from '../lib/api';
import { cost, count, deviceTimeLabel, duration, seconds, share, speedup, time } from '../lib/format';
import { Link, navigate, paths } from '../lib/router';
import { withToken } from '../lib/token';
import { useApi } from '../lib/use-api';
import { useEventStream, useThrottled } from '../lib/use-event-stream';

function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="stat">
      <div className="label">{label}</div>
      <div className="value">{value}</div>
      {note ? <div className="note">{note}</div> : null}
    </div>
  );
}

function RunControls({ detail, onChanged }: { detail: RunDetail; onChanged: () => void }) {
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

function CompareWith({ runId }: { runId: string }) {
  const { data } = useApi<RunList>('/api/runs');
  const others = data?.runs.filter((run) => run.id !== runId) ?? [];
  if (others.length === 0)
    return (
      <p className="muted" style={{ margin: 0 }}>
        No other run in this store to compare with.
      </p>
    );
  return (
    <select
      className="select-inline"
      defaultValue=""
      onChange={(event) => event.target.value && navigate(paths.compareRuns(runId, event.target.value))}
      aria-label="compare with run"
      style={{ width: '100%' }}
    >
      <option value="">compare with another run…</option>
      {others.map((run) => (
        <option key={run.id} value={run.id}>
          {run.id} ({run.strategy}, {run.model})
        </option>
      ))}
    </select>
  );
}

/** One run: its standing, its problems, the controls to stop, resume and report, and its activity. */
export function RunPage({ runId }: { runId: string }) {
  const { data, error, loading, reload } = useApi<RunDetail>(`/api/runs/${encodeURIComponent(runId)}`);
  const [fresh, setFresh] = useState<RunEventView[]>([]);
  const refresh = useThrottled(reload, 600);
  const [streamFrom, setStreamFrom] = useState<number | null>(null);
  useEffect(() => {
    if (data && streamFrom === null) setStreamFrom(data.recentEvents.at(-1)?.id ?? 0);
  }, [data, streamFrom]);
  const live = useEventStream<RunEventView>(
    streamFrom === null ? null : `/api/stream/runs/${encodeURIComponent(runId)}?afterId=${streamFrom}`,
    'run-event',
    (event) => {
      setFresh((current) => [...current.filter((known) => known.id !== event.id), event].slice(-200));
      refresh();
    },
  );
  const crumbs = [{ label: 'runs', to: paths.runs() }, { label: runId }];
  if (loading)
    return (
      <Page crumbs={crumbs}>
        <Loading what={`run ${runId}`} />
      </Page>
    );
  if (error || !data)
    return (
      <Page crumbs={crumbs}>
        <ErrorState error={error ?? new Error('no answer')} retry={reload} what={`run ${runId}`} />
      </Page>
    );
  const { run } = data;
  const names = new Map(run.problems.map((problem) => [problem.problemHash, problem.name]));
  const known = new Set(data.recentEvents.map((event) => event.id));
  const events = [...data.recentEvents, ...fresh.filter((event) => !known.has(event.id))].sort((a, b) => a.id - b.id).slice(-200);
  const hints = data.actions.filter((action) => action.type === 'hint' && action.problemHash === null);
  return (
    <Page crumbs={crumbs} live={live}>
      <div className="page-head">
        <div className="title">
          <h1>
            Run {run.id} <StatusBadge status={run.status} stopPending={run.stopPending} />
          </h1>
          <div className="sub">
            <span>
              strategy <b>{run.strategy}</b>
            </span>
            <span>
              model <b className="mono">{run.model}</b>
            </span>
            <span>
              backend <b>{run.backend ?? '–'}</b>
              {run.precision ? ` · ${run.precision}` : ''}
            </span>
            <span>started {time(run.startedAt)}</span>
            <span>{run.finishedAt ? `finished after ${duration(run.startedAt, run.finishedAt)}` : `last activity ${time(run.updatedAt)}`}</span>
          </div>
          {run.error ? (
            <p className="notice" style={{ marginTop: 8 }}>
              The run failed: {run.error}
            </p>
          ) : null}
        </div>
        <RunControls detail={data} onChanged={reload} />
      </div>
      <div className="stats">
        <Stat label="problems solved" value={`${run.totals.problemsSolved} / ${run.totals.problems}`} note="with a correct kernel" />
        <Stat label="correct share" value={share(run.totals.correctShare)} note={`${run.totals.correct} of ${run.totals.evaluated} evaluated`} />
        <Stat label="best speedup" value={speedup(run.totals.bestSpeedupVsBest)} note="vs the best baseline" />
        <Stat
          label="tokens"
          value={count(run.totals.inputTokens + run.totals.outputTokens)}
          note={`${count(run.totals.inputTokens)} in · ${count(run.totals.outputTokens)} out`}
        />
        <Stat label="cost" value={cost(run.totals.costUsd)} note={`${run.totals.modelCalls} model calls`} />
        <Stat label={deviceTimeLabel(run.backend)} value={seconds(run.totals.gpuSeconds)} note={`${run.totals.candidates} candidates`} />
      </div>
      <div className="two-col">
        <div className="panel">
          <div className="panel-head">
            <h2>Problems</h2>
            <span className="muted">open one for its candidate tree, code and timings</span>
          </div>
          <div className="table-scroll">
            <table className="data">
              <thead>
                <tr>
                  <th>problem</th>
                  <th>level</th>
                  <th className="num" title="correct / evaluated, of all candidates">
                    correct
                  </th>
                  <th>best verdict</th>
                  <th className="num">vs eager</th>
                  <th className="num">vs compile</th>
                  <th className="num">vs best</th>
                  <th>accepted</th>
                  <th className="num">tokens</th>
                </tr>
              </thead>
              <tbody>
                {run.problems.map((problem) => (
                  <tr key={problem.problemHash} data-testid={`problem-row-${problem.name}`}>
                    <td>
                      <Link to={paths.problem(run.id, problem.problemHash)}>
                        <b>{problem.name}</b>
                      </Link>
                    </td>
                    <td>{problem.level}</td>
                    <td className="num">
                      {problem.correct}/{problem.evaluated}
                      {problem.candidates > problem.evaluated ? <span className="faint"> of {problem.candidates}</span> : null}
                    </td>
                    <td>
                      <VerdictBadge verdict={problem.bestVerdict} />
                    </td>
                    <td className="num">{speedup(problem.bestSpeedupVsEager)}</td>
                    <td className="num">{speedup(problem.bestSpeedupVsCompile)}</td>
                    <td className="num">
                      <b>{speedup(problem.bestSpeedupVsBest)}</b>
                    </td>
                    <td>
                      {problem.acceptedCandidateId ? (
                        <Link to={paths.problem(run.id, problem.problemHash, problem.acceptedCandidateId)}>#{problem.acceptedCandidateId}</Link>
                      ) : (
                        <span className="faint">–</span>
                      )}
                    </td>
                    <td className="num">{count(problem.inputTokens + problem.outputTokens)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
        <div style={{ display: 'flex', flexDirection: 'column', gap: 14 }}>
          <div className="panel">
            <div className="panel-head">
              <h2>Hint for every problem</h2>
            </div>
            <div className="panel-body">
              <HintForm runId={run.id} hints={hints} onAdded={reload} />
            </div>
          </div>
          <div className="panel">
            <div className="panel-head">
              <h2>Compare</h2>
            </div>
            <div className="panel-body">
              <CompareWith runId={run.id} />
            </div>
          </div>
          <div className="panel">
            <div className="panel-head">
              <h2>Activity</h2>
              <span className="muted">{run.totals.events} events</span>
            </div>
            <div className="panel-body">
              <ActivityFeed events={events} names={names} />
            </div>
          </div>
        </div>
      </div>
    </Page>
  );
}
