import type { CandidateDetail } from '../../../src/server/api-types';
import { VerdictBadge } from '../components/badges';
import { DiffView } from '../components/diff-view';
import { Page } from '../components/layout';
import { ErrorState, Loading } from '../components/states';
import { TimingTable } from '../components/timing-table';
import { Link, paths } from '../lib/router';
import { useApi } from '../lib/use-api';

function Side({ detail }: { detail: CandidateDetail }) {
  const { candidate, evaluation } = detail;
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>
          <Link to={paths.problem(candidate.runId, candidate.problemHash, candidate.id)}>#{candidate.id}</Link>{' '}
          <span className="muted">
            {candidate.problemName} · run {candidate.runId} · round {candidate.round}
          </span>
        </h2>
        <VerdictBadge verdict={candidate.verdict} evaluating={candidate.evaluating} />
      </div>
      <div className="panel-body">
        {evaluation ? (
          <>
            {evaluation.result.reasons.map((reason, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a verdict's reasons in the evaluator's order, never reordered; two may be alike.
              <div className="reason" key={index}>
                <div className="check">{reason.check}</div>
                {reason.message}
              </div>
            ))}
            <div className="table-scroll">
              <TimingTable result={evaluation.result} speedOfLight={detail.speedOfLight} compact />
            </div>
          </>
        ) : (
          <p className="muted">Not evaluated yet.</p>
        )}
      </div>
    </div>
  );
}

/** Two candidates side by side: verdicts, timings, and the diff of their code. */
export function CompareCandidatesPage({ a, b }: { a: number; b: number }) {
  const left = useApi<CandidateDetail>(`/api/candidates/${a}`);
  const right = useApi<CandidateDetail>(`/api/candidates/${b}`);
  const crumbs = [{ label: 'runs', to: paths.runs() }, { label: `compare #${a} ↔ #${b}` }];
  if (left.loading || right.loading)
    return (
      <Page crumbs={crumbs}>
        <Loading what="the two candidates" />
      </Page>
    );
  const failed = left.error ?? right.error;
  if (failed || !left.data || !right.data)
    return (
      <Page crumbs={crumbs}>
        <ErrorState
          error={failed ?? new Error('no answer')}
          retry={() => {
            left.reload();
            right.reload();
          }}
          what="the candidates"
        />
      </Page>
    );
  return (
    <Page crumbs={crumbs}>
      <div className="page-head">
        <div className="title">
          <h1>
            Candidate #{a} ↔ #{b}
          </h1>
        </div>
      </div>
      <div className="compare-cols">
        <Side detail={left.data} />
        <Side detail={right.data} />
      </div>
      <div className="panel">
        <div className="panel-head">
          <h2>Code</h2>
        </div>
        <div className="panel-body">
          <DiffView
            before={left.data.candidate.source}
            after={right.data.candidate.source}
            names={{ before: `candidate-${a}.py`, after: `candidate-${b}.py` }}
            layout="side-by-side"
          />
        </div>
      </div>
    </Page>
  );
}
