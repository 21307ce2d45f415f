import { useEffect, useRef, useState } from 'react';
import type { CandidateDetail, CandidateNode, EditResponse } from '../../../src/server/api-types';
import { api } from '../lib/api';
import { speedup, time } from '../lib/format';
import { Link, paths } from '../lib/router';
import { useApi } from '../lib/use-api';
import { ActionButton } from './action-button';
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

function AcceptForm({ detail, onDone }: { detail: CandidateDetail; onDone: () => void }) {
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
  if (loading)
    return (
      <div className="panel">
        <Loading what={`candidate #${candidateId}`} />
      </div>
    );
  if (error || !data)
    return (
      <div className="panel">
        <ErrorState error={error ?? new Error('no answer')} retry={reload} what={`candidate #${candidateId}`} />
      </div>
    );
  const { candidate, evaluation } = data;
  const tabs: Array<[Tab, string]> = [
    ['overview', 'Verdict & timing'],
    ['code', 'Code'],
    ['diff', candidate.parentId ? `Diff vs #${candidate.parentId}` : 'Diff'],
    ['prompt', 'Prompt & reply'],
    ...(data.build ? [['build', 'Registers · PTX · SASS'] as [Tab, string]] : []),
    ['edit', 'Edit & evaluate'],
  ];
  const others = siblings.filter((node) => node.id !== candidate.id);
  return (
    <div className="panel" data-testid="candidate-panel">
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
        <AcceptForm
          detail={data}
          onDone={() => {
            reload();
            onChanged();
          }}
        />
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
      <div className="tabs" role="tablist">
        {tabs.map(([key, label]) => (
          <button
            type="button"
            key={key}
            role="tab"
            aria-selected={tab === key}
            className={`tab ${tab === key ? 'active' : ''}`}
            onClick={() => setTab(key)}
            data-testid={`tab-${key}`}
          >
            {label}
          </button>
        ))}
      </div>
      <div className="panel-body">
        {tab === 'overview' ? (
          evaluation ? (
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
          )
        ) : null}
        {tab === 'code' ? <CodeView source={candidate.source} testId="candidate-code" /> : null}
        {tab === 'diff' ? (
          data.parent ? (
            <DiffView
              before={data.parent.source}
              after={candidate.source}
              names={{ before: `candidate-${data.parent.id}.py`, after: `candidate-${candidate.id}.py` }}
            />
          ) : (
            <p className="muted">A root candidate: it has no parent to compare with. Pick another candidate under “compare with…”.</p>
          )
        ) : null}
        {tab === 'prompt' ? <PromptView call={data.modelCall} origin={candidate.origin} /> : null}
        {tab === 'build' && data.build ? <BuildView build={data.build} /> : null}
        {tab === 'edit' ? <CandidateEditor key={candidate.id} candidateId={candidate.id} source={candidate.source} onSubmitted={onEdited} /> : null}
      </div>
    </div>
  );
}
