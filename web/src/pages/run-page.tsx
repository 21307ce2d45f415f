import { useEffect, useState } from 'react';
import type { RunDetail, RunEventView, RunList } from '../../../src/server/api-types';
import { ActivityFeed } from '../components/activity-feed';
import { StatusBadge, VerdictBadge } from '../components/badges';
import { HintForm } from '../components/hint-form';
import { RunControls } from '../components/run-controls';
import { Page } from '../components/layout';
import { ErrorState, Loading } from '../components/states';
import { cost, count, deviceTimeLabel, duration, seconds, share, speedup, time } from '../lib/format';
import { Link, navigate, paths } from '../lib/router';
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

/** The run's title, settings, times and failure, with its controls. */
function RunHead({ detail, onChanged }: { detail: RunDetail; onChanged: () => void }) {
  const { run } = detail;
  return (
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
      <RunControls detail={detail} onChanged={onChanged} />
    </div>
  );
}

/** The run's totals: solved problems, correct share, best speedup, tokens, cost and device time. */
function RunStats({ run }: { run: RunDetail['run'] }) {
  return (
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
  );
}

/** One problem of the run: its standing, a link to its page and to its accepted kernel. */
function ProblemRow({ runId, problem }: { runId: string; problem: RunDetail['run']['problems'][number] }) {
  return (
    <tr data-testid={`problem-row-${problem.name}`}>
      <td>
        <Link to={paths.problem(runId, problem.problemHash)}>
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
          <Link to={paths.problem(runId, problem.problemHash, problem.acceptedCandidateId)}>#{problem.acceptedCandidateId}</Link>
        ) : (
          <span className="faint">–</span>
        )}
      </td>
      <td className="num">{count(problem.inputTokens + problem.outputTokens)}</td>
    </tr>
  );
}

/** The run's problems, each with its standing and a link to its page. */
function ProblemsPanel({ run }: { run: RunDetail['run'] }) {
  return (
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
              <ProblemRow key={problem.problemHash} runId={run.id} problem={problem} />
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** The side column: the run-wide hint, a run to compare with, and the activity feed. */
function RunSidebar({ detail, events, onChanged }: { detail: RunDetail; events: RunEventView[]; onChanged: () => void }) {
  const { run } = detail;
  const names = new Map(run.problems.map((problem) => [problem.problemHash, problem.name]));
  const hints = detail.actions.filter((action) => action.type === 'hint' && action.problemHash === null);
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 14 }}>
      <div className="panel">
        <div className="panel-head">
          <h2>Hint for every problem</h2>
        </div>
        <div className="panel-body">
          <HintForm runId={run.id} hints={hints} onAdded={onChanged} />
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
  if (loading || error || !data)
    return (
      <Page crumbs={crumbs}>
        {loading ? <Loading what={`run ${runId}`} /> : <ErrorState error={error ?? new Error('no answer')} retry={reload} what={`run ${runId}`} />}
      </Page>
    );
  const { run } = data;
  const known = new Set(data.recentEvents.map((event) => event.id));
  const events = [...data.recentEvents, ...fresh.filter((event) => !known.has(event.id))].sort((a, b) => a.id - b.id).slice(-200);
  return (
    <Page crumbs={crumbs} live={live}>
      <RunHead detail={data} onChanged={reload} />
      <RunStats run={run} />
      <div className="two-col">
        <ProblemsPanel run={run} />
        <RunSidebar detail={data} events={events} onChanged={reload} />
      </div>
    </Page>
  );
}
