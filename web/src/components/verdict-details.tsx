import type { ReactNode } from 'react';
import type { CandidateDetail } from '../../../src/server/api-types';
import { error, ms } from '../lib/format';
import { VerdictBadge } from './badges';
import { ShapesTable } from './shapes-table';

type Result = NonNullable<CandidateDetail['evaluation']>['result'];
type Attribution = NonNullable<Result['attribution']>;

const percent = (share: number) => `${Math.round(share * 100)}%`;

/** Where the traced correctness call's time went: own kernels, libraries, PyTorch operators (docs/spec.md section 8). */
function AttributionSection({ attribution }: { attribution: Attribution }) {
  const origin = attribution.by_origin_ms;
  const total = origin ? origin.own + origin.library + origin.torch : 0;
  return (
    <>
      <h3>Attribution</h3>
      {attribution.own_share === null || !origin ? (
        <p className="muted">not measured: {attribution.unavailable ?? 'no traced call'}</p>
      ) : (
        <dl className="kv" data-testid="attribution">
          <dt>own kernels</dt>
          <dd>
            {percent(attribution.own_share)} of the {attribution.measured === 'host' ? 'host' : 'device'} time ({ms(origin.own)})
          </dd>
          {origin.library > 0 ? (
            <>
              <dt>vendor libraries</dt>
              <dd>{ms(origin.library)}</dd>
            </>
          ) : null}
          {attribution.torch_ops.slice(0, 6).map((entry) => (
            <span key={entry.op} style={{ display: 'contents' }}>
              <dt className="mono">{entry.op}</dt>
              <dd>
                {total > 0 ? percent(entry.ms / total) : ''} ({ms(entry.ms)})
                {entry.in_reference === true ? <span className="faint"> · the reference runs it too</span> : null}
                {entry.in_reference === false ? <span className="faint"> · the reference never runs it</span> : null}
              </dd>
            </span>
          ))}
        </dl>
      )}
      {attribution.substituted_ops.length > 0 ? (
        <p className="notice">Substituted: {attribution.substituted_ops.join(', ')} — PyTorch operators the reference never runs did part of the work.</p>
      ) : null}
    </>
  );
}

/** The error profile of a verdict's correctness trials: passes, errors against tolerance, the first failed trials. */
function ErrorProfile({ correctness }: { correctness: NonNullable<Result['correctness']> }) {
  return (
    <>
      <h3>Error profile</h3>
      <dl className="kv">
        <dt>trials passed</dt>
        <dd>
          {correctness.passed} of {correctness.trials}
        </dd>
        <dt>max abs error</dt>
        <dd>
          {error(correctness.max_abs_error)}
          {correctness.atol !== undefined ? (
            <span className="faint">
              {' '}
              (atol {correctness.atol}
              {correctness.tolerance ? `, ${correctness.tolerance}` : ''})
            </span>
          ) : null}
        </dd>
        <dt>max rel error</dt>
        <dd>
          {error(correctness.max_rel_error)}
          {correctness.rtol !== undefined ? <span className="faint"> (rtol {correctness.rtol})</span> : null}
        </dd>
        {correctness.mismatch_count !== undefined ? (
          <>
            <dt>elements out of tolerance</dt>
            <dd>{correctness.mismatch_count.toLocaleString('en')}</dd>
          </>
        ) : null}
        {correctness.fp64 ? (
          <>
            <dt>vs float64 reference</dt>
            <dd>
              abs {error(correctness.fp64.max_abs_error)}, rel {error(correctness.fp64.max_rel_error)}
            </dd>
          </>
        ) : null}
      </dl>
      {correctness.trial_details
        ?.filter((trial) => trial.message)
        .slice(0, 3)
        .map((trial, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the first failed trials in the evaluator's order, never reordered; seeds may repeat.
          <p key={index} className="muted mono" style={{ margin: '6px 0' }}>
            trial seed {trial.seed}: {trial.message}
          </p>
        ))}
    </>
  );
}

/** The diagnostics a failure leaves: its first error, a known cause, compiler output, traceback and stderr. */
function DiagnosticsSections({ diagnostics }: { diagnostics: Result['diagnostics'] }) {
  return (
    <>
      {diagnostics.first_error ? (
        <>
          <h3>First error</h3>
          <pre className="log">{diagnostics.first_error}</pre>
        </>
      ) : null}
      {diagnostics.known_cause ? <p className="notice">{diagnostics.known_cause}</p> : null}
      {diagnostics.compiler ? (
        <>
          <h3>Compiler output</h3>
          <pre className="log" data-testid="compiler-output">
            {diagnostics.compiler}
          </pre>
        </>
      ) : null}
      {diagnostics.traceback ? (
        <>
          <h3>Traceback</h3>
          <pre className="log">{diagnostics.traceback}</pre>
        </>
      ) : null}
      {diagnostics.stderr.trim() ? (
        <>
          <h3>Standard error</h3>
          <pre className="log">{diagnostics.stderr}</pre>
        </>
      ) : null}
    </>
  );
}

/**
 * The verdict, the guard's and the harness's reasons, a problem folder's shapes, then `timing`
 * (what matters most for a correct candidate), the error profile and the diagnostics.
 */
export function VerdictDetails({ result, timing, guard }: { result: Result; timing?: ReactNode; guard?: ReactNode }) {
  const { correctness, diagnostics } = result;
  return (
    <div>
      <div style={{ display: 'flex', gap: 10, alignItems: 'center', marginBottom: 10 }}>
        <VerdictBadge verdict={result.verdict} />
        <span className="muted">
          {result.backend} · {result.precision}
          {result.preset ? ` · ${result.preset} sizes` : ''}
          {result.environment
            ? ` · ${typeof result.environment.cpu === 'string' && result.environment.device === 'cpu' ? result.environment.cpu : result.environment.device} · torch ${result.environment.torch}${result.environment.cuda ? ` · CUDA ${result.environment.cuda}` : ''}`
            : ''}
        </span>
      </div>
      {result.reasons.length > 0 ? (
        <>
          <h3>Reasons</h3>
          {result.reasons.map((reason, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a verdict's reasons in the evaluator's order, never reordered; two may be alike.
            <div className="reason" key={index} data-testid="verdict-reason">
              <div className="check">{reason.check}</div>
              <div>{reason.message}</div>
            </div>
          ))}
        </>
      ) : null}
      {result.attribution ? <AttributionSection attribution={result.attribution} /> : null}
      <ShapesTable result={result} />
      {timing}
      {guard}
      {correctness ? <ErrorProfile correctness={correctness} /> : null}
      <DiagnosticsSections diagnostics={diagnostics} />
      {result.stages ? (
        <>
          <h3>Stages</h3>
          <p className="muted" style={{ margin: 0 }}>
            {Object.entries(result.stages)
              .map(([stage, duration]) => `${stage} ${ms(duration)}`)
              .join(' · ')}
          </p>
        </>
      ) : null}
    </div>
  );
}
