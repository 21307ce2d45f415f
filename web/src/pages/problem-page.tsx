import { useState } from 'react';
import type { EditResponse, ProblemView, RunEventView } from '../../../src/server/api-types';
import { VerdictBadge } from '../components/badges';
import { CandidatePanel } from '../components/candidate-panel';
import { CandidateTree } from '../components/candidate-tree';
import { HintForm } from '../components/hint-form';
import { IdeasList } from '../components/ideas-list';
import { Page } from '../components/layout';
import { ProgressCharts } from '../components/progress-charts';
import { Empty, ErrorState, Loading } from '../components/states';
import { share, speedup } from '../lib/format';
import { navigate, paths } from '../lib/router';
import { useApi } from '../lib/use-api';
import { useEventStream, useThrottled } from '../lib/use-event-stream';

/** The candidate to show when the URL names none: the accepted one, else the fastest correct one, else the newest. */
function defaultCandidate(view: ProblemView): number | null {
  return view.problem.acceptedCandidateId ?? view.problem.bestCandidateId ?? view.candidates.at(-1)?.id ?? null;
}

/** The problem's name, level and best verdict, its standing and its file. */
function ProblemHead({ problem }: { problem: ProblemView['problem'] }) {
  return (
    <div className="page-head">
      <div className="title">
        <h1>
          {problem.name} <span className="chip">{problem.level}</span> <VerdictBadge verdict={problem.bestVerdict} />
        </h1>
        <div className="sub">
          <span>
            {problem.candidates} candidates, {problem.correct} of {problem.evaluated} evaluated correct ({share(problem.correctShare)})
          </span>
          <span>
            best <b>{speedup(problem.bestSpeedupVsEager)}</b> vs eager · <b>{speedup(problem.bestSpeedupVsCompile)}</b> vs compile ·{' '}
            <b>{speedup(problem.bestSpeedupVsBest)}</b> vs best
          </span>
          {problem.acceptedCandidateId ? (
            <span>
              accepted <b>#{problem.acceptedCandidateId}</b>
            </span>
          ) : null}
          <span className="mono faint" title={problem.path ?? undefined}>
            {problem.path ?? problem.problemHash.slice(0, 16)}
          </span>
        </div>
      </div>
    </div>
  );
}

/** The side column: the candidate tree, the problem's hints and, where there are any, its ideas. */
function ProblemSide({
  data,
  runId,
  problemHash,
  selected,
  onSelect,
  onChanged,
}: {
  data: ProblemView;
  runId: string;
  problemHash: string;
  selected: number | null;
  onSelect: (id: number) => void;
  onChanged: () => void;
}) {
  const { problem } = data;
  return (
    <div className="side">
      <div className="panel" style={{ display: 'flex', flexDirection: 'column', minHeight: 0 }}>
        <div className="panel-head">
          <h2>Candidates</h2>
          <span className="muted">{data.candidates.length}</span>
        </div>
        {data.candidates.length === 0 ? (
          <Empty title="No candidates yet">
            <p>The search has not stored a candidate for this problem. They appear here as they arrive.</p>
          </Empty>
        ) : (
          <CandidateTree candidates={data.candidates} selected={selected} onSelect={onSelect} bestId={problem.bestCandidateId} />
        )}
      </div>
      <div className="panel" style={{ overflow: 'auto' }}>
        <div className="panel-head">
          <h2>Hints</h2>
        </div>
        <div className="panel-body">
          <HintForm runId={runId} problemHash={problemHash} hints={data.hints} onAdded={onChanged} />
        </div>
      </div>
      {data.ideas.length > 0 ? (
        <div className="panel" style={{ overflow: 'auto' }}>
          <div className="panel-head">
            <h2>Ideas</h2>
          </div>
          <div className="panel-body">
            <IdeasList ideas={data.ideas} onChanged={onChanged} />
          </div>
        </div>
      ) : null}
    </div>
  );
}

/**
 * A problem within a run: the candidate tree, the progress charts, the selected candidate, and
 * the hint and idea controls. Follows the run's live events for this problem.
 */
export function ProblemPage({ runId, problemHash, candidateId }: { runId: string; problemHash: string; candidateId: number | null }) {
  const url = `/api/runs/${encodeURIComponent(runId)}/problems/${problemHash}`;
  const { data, error, loading, reload } = useApi<ProblemView>(url);
  const [version, setVersion] = useState(0);
  const refresh = useThrottled(() => {
    reload();
    setVersion((value) => value + 1);
  }, 400);
  const live = useEventStream<RunEventView>(data ? `/api/stream/runs/${encodeURIComponent(runId)}` : null, 'run-event', (event) => {
    if (event.problemHash === problemHash || event.problemHash === null) refresh();
  });
  const crumbs = [{ label: 'runs', to: paths.runs() }, { label: runId, to: paths.run(runId) }, { label: data?.problem.name ?? problemHash.slice(0, 12) }];
  if (loading || error || !data)
    return (
      <Page crumbs={crumbs}>
        {loading ? <Loading what="the problem" /> : <ErrorState error={error ?? new Error('no answer')} retry={reload} what="the problem" />}
      </Page>
    );
  // A candidate named in the URL is shown even before the tree lists it (an edit just stored).
  const selected = candidateId ?? defaultCandidate(data);
  const select = (id: number): void => navigate(paths.problem(runId, problemHash, id), { replace: true });
  const onEdited = (edit: EditResponse): void => {
    reload();
    navigate(paths.problem(runId, problemHash, edit.candidate.id), { replace: true });
  };
  const { problem } = data;
  return (
    <Page crumbs={crumbs} live={live}>
      <ProblemHead problem={problem} />
      <ProgressCharts candidates={data.candidates} runStartedAt={data.run.startedAt} onPick={select} />
      <div className="problem-layout">
        <ProblemSide data={data} runId={runId} problemHash={problemHash} selected={selected} onSelect={select} onChanged={reload} />
        <div style={{ minWidth: 0 }}>
          {selected === null ? (
            <div className="panel">
              <Empty title="Nothing to show yet">The first candidate appears here as soon as the search stores it.</Empty>
            </div>
          ) : (
            <CandidatePanel candidateId={selected} version={version} siblings={data.candidates} onChanged={reload} onEdited={onEdited} />
          )}
        </div>
      </div>
    </Page>
  );
}
