import { useEffect, useRef, useState } from 'react';
import type { CandidateDetail, CandidateNode, EditResponse } from '../../../src/server/api-types';
import { speedup, time } from '../lib/format';
import { Link, paths } from '../lib/router';
import { useApi } from '../lib/use-api';
import { AcceptForm } from './accept-form';
import { VerdictBadge } from './badges';
import { BuildView } from './build-view';
import { CandidateEditor } from './candidate-editor';
import { CodeView } from './code-view';
import { DiffView } from './diff-view';
import { GuardSection } from './guard-section';
import { PromptView } from './prompt-view';
import { shapeValues } from './shapes-table';
import { ErrorState, Loading } from './states';
import { TimingTable } from './timing-table';
import { VerdictDetails } from './verdict-details';

type Tab = 'overview' | 'code' | 'diff' | 'prompt' | 'build' | 'edit';

/**
 * The timing section's heading. A problem folder's sweep reports the first shape's statistics with
 * the sweep's geometric-mean speedups (docs/problems.md): the heading says so.
 */
function TimingHeading({ result }: { result: NonNullable<CandidateDetail['evaluation']>['result'] }) {
  const first = result.shapes?.[0];
  if (!first) return <h3>Timing</h3>;
  return (
    <>
      <h3 data-testid="timing-heading">
        Timing of shape {first.index} ({shapeValues(first)})
      </h3>
      <p className="muted" style={{ marginTop: 0 }}>
        The statistics are this shape's; the speedups are the geometric means over the {result.shapes!.length} shapes above.
      </p>
    </>
  );
}

/** The candidate's identity: number, verdict, round, idea, who wrote it and, when correct, its speedups. */
function CandidateHead({ candidate }: { candidate: CandidateDetail['candidate'] }) {
  return (
    <div className="candidate-head">
      <span className="name" title={`created ${time(candidate.createdAt)}`}>
        Candidate #{candidate.id}
      </span>
      <VerdictBadge verdict={candidate.verdict} evaluating={candidate.evaluating} />
      <span className="chip">round {candidate.round}</span>
      {candidate.ideaLabel ? <span className="chip idea">{candidate.ideaLabel}</span> : null}
      <span
        className={`chip ${candidate.origin === 'human' ? 'human' : ''}`}
        title={
          candidate.origin === 'human'
            ? 'written by a person in the dashboard'
            : candidate.origin === 'files'
              ? 'from a candidate file'
              : 'written by the model'
        }
      >
        {candidate.origin === 'human' ? 'by a person' : candidate.origin === 'files' ? 'from a file' : 'by the model'}
      </span>
      {candidate.verdict === 'correct' ? (
        <span className="muted">
          <b>{speedup(candidate.speedupVsEager)}</b> vs eager · <b>{speedup(candidate.speedupVsCompile)}</b> vs compile
        </span>
      ) : null}
    </div>
  );
}

/**
 * The candidate's lineage and children, its acceptance, and a link comparing it with a sibling
 * (`compareWith`, kept by the panel so that it outlasts a reload).
 */
function CandidateLineage({
  data,
  siblings,
  compareWith,
  setCompareWith,
  onAccepted,
}: {
  data: CandidateDetail;
  siblings: readonly CandidateNode[];
  compareWith: number | null;
  setCompareWith: (id: number | null) => void;
  onAccepted: () => void;
}) {
  const { candidate } = data;
  const others = siblings.filter((node) => node.id !== candidate.id);
  return (
    <div className="candidate-head" style={{ paddingTop: 6, paddingBottom: 6, fontSize: 12.5 }}>
      <span className="muted">lineage</span>
      {data.lineage.map((step, index) => (
        <span key={step.id}>
          {index > 0 ? <span className="faint"> → </span> : null}
          {step.id === candidate.id ? <b>#{step.id}</b> : <Link to={paths.problem(candidate.runId, candidate.problemHash, step.id)}>#{step.id}</Link>}
        </span>
      ))}
      {data.children.length > 0 ? <span className="muted">· children {data.children.map((child) => `#${child}`).join(', ')}</span> : null}
      <span style={{ flex: 1 }} />
      <AcceptForm detail={data} onDone={onAccepted} />
      <select
        className="select-inline"
        value={compareWith ?? ''}
        onChange={(event) => setCompareWith(event.target.value ? Number(event.target.value) : null)}
        aria-label="compare with"
      >
        <option value="">compare with…</option>
        {others.map((node) => (
          <option key={node.id} value={node.id}>
            #{node.id} {node.verdict ?? 'pending'}
          </option>
        ))}
      </select>
      {compareWith ? (
        <Link className="btn small" to={paths.compareCandidates(candidate.id, compareWith)}>
          Compare
        </Link>
      ) : null}
    </div>
  );
}

/** The tab bar: which of the candidate's views shows (the build tab only where there are build figures). */
function CandidateTabs({ data, tab, onSelect }: { data: CandidateDetail; tab: Tab; onSelect: (tab: Tab) => void }) {
  const { candidate } = data;
  const tabs: Array<[Tab, string]> = [
    ['overview', 'Verdict & timing'],
    ['code', 'Code'],
    ['diff', candidate.parentId ? `Diff vs #${candidate.parentId}` : 'Diff'],
    ['prompt', 'Prompt & reply'],
    ...(data.build ? [['build', 'Registers · PTX · SASS'] as [Tab, string]] : []),
    ['edit', 'Edit & evaluate'],
  ];
  return (
    <div className="tabs" role="tablist">
      {tabs.map(([key, label]) => (
        <button
          type="button"
          key={key}
          role="tab"
          aria-selected={tab === key}
          className={`tab ${tab === key ? 'active' : ''}`}
          onClick={() => onSelect(key)}
          data-testid={`tab-${key}`}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

/** The overview tab: the verdict with its timing and guard, or why there is none yet. */
function OverviewTab({ data }: { data: CandidateDetail }) {
  const { candidate, evaluation } = data;
  return evaluation ? (
    <VerdictDetails
      result={evaluation.result}
      timing={
        evaluation.result.timing ? (
          <>
            <TimingHeading result={evaluation.result} />
            <TimingTable result={evaluation.result} speedOfLight={data.speedOfLight} />
          </>
        ) : null
      }
      guard={data.guard ? <GuardSection guard={data.guard} reasons={evaluation.result.reasons} /> : null}
    />
  ) : data.evaluationError ? (
    <p className="notice" role="alert">
      The evaluation could not run: {data.evaluationError}. Fix the cause (see the server's log), then edit and evaluate again, or resume the run.
    </p>
  ) : candidate.evaluating ? (
    <p className="muted">
      <span className="spinner" /> Evaluating under the run's settings… the verdict appears here when it is in.
    </p>
  ) : (
    <p className="muted">Not evaluated yet. Resuming the run evaluates stored candidates first.</p>
  );
}

/** The diff tab: the candidate against its parent; a root has none. */
function DiffTab({ data }: { data: CandidateDetail }) {
  const { candidate } = data;
  return data.parent ? (
    <DiffView
      before={data.parent.source}
      after={candidate.source}
      names={{ before: `candidate-${data.parent.id}.py`, after: `candidate-${candidate.id}.py` }}
    />
  ) : (
    <p className="muted">A root candidate: it has no parent to compare with. Pick another candidate under “compare with…”.</p>
  );
}

/**
 * One candidate: verdict and timings, code, diff against its parent, prompt and reply, CUDA
 * build figures, and the editor. `version` changes when the page hears news of the problem.
 */
export function CandidatePanel({
  candidateId,
  version,
  siblings,
  onChanged,
  onEdited,
}: {
  candidateId: number;
  version: number;
  siblings: readonly CandidateNode[];
  onChanged: () => void;
  onEdited: (edit: EditResponse) => void;
}) {
  const { data, error, loading, reload } = useApi<CandidateDetail>(`/api/candidates/${candidateId}`);
  const [tab, setTab] = useState<Tab>('overview');
  const [compareWith, setCompareWith] = useState<number | null>(null);
  const seenVersion = useRef(version);
  useEffect(() => {
    if (seenVersion.current === version) return;
    seenVersion.current = version;
    reload();
  }, [version, reload]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: candidateId is the trigger: another candidate leaves the edit and build tabs for the overview.
  useEffect(() => setTab((current) => (current === 'edit' || current === 'build' ? 'overview' : current)), [candidateId]);
  if (loading || error || !data)
    return (
      <div className="panel">
        {loading ? (
          <Loading what={`candidate #${candidateId}`} />
        ) : (
          <ErrorState error={error ?? new Error('no answer')} retry={reload} what={`candidate #${candidateId}`} />
        )}
      </div>
    );
  const { candidate } = data;
  return (
    <div className="panel" data-testid="candidate-panel">
      <CandidateHead candidate={candidate} />
      <CandidateLineage
        data={data}
        siblings={siblings}
        compareWith={compareWith}
        setCompareWith={setCompareWith}
        onAccepted={() => {
          reload();
          onChanged();
        }}
      />
      <CandidateTabs data={data} tab={tab} onSelect={setTab} />
      <div className="panel-body">
        {tab === 'overview' ? <OverviewTab data={data} /> : null}
        {tab === 'code' ? <CodeView source={candidate.source} testId="candidate-code" /> : null}
        {tab === 'diff' ? <DiffTab data={data} /> : null}
        {tab === 'prompt' ? <PromptView call={data.modelCall} origin={candidate.origin} /> : null}
        {tab === 'build' && data.build ? <BuildView build={data.build} /> : null}
        {tab === 'edit' ? <CandidateEditor key={candidate.id} candidateId={candidate.id} source={candidate.source} onSubmitted={onEdited} /> : null}
      </div>
    </div>
  );
}
