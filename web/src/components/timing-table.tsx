import type { CandidateDetail } from '../../../src/server/api-types';
import { bytes, count, ms, share, speedup } from '../lib/format';

type Result = NonNullable<CandidateDetail['evaluation']>['result'];
type Stats = NonNullable<Result['timing']>['candidate_ms'];

/** A row's 95% interval drawn on a shared scale, with the median marked. */
function IntervalBar({ stats, scaleMs, color }: { stats: Stats; scaleMs: number; color: string }) {
  const left = (stats.ci95[0] / scaleMs) * 100;
  const width = Math.max(0.8, ((stats.ci95[1] - stats.ci95[0]) / scaleMs) * 100);
  return (
    <div className="ci-bar" title={`95% interval ${ms(stats.ci95[0])} – ${ms(stats.ci95[1])}`}>
      <span className="range" style={{ left: `${left}%`, width: `${width}%`, background: color, opacity: 0.45 }} />
      <span className="median" style={{ left: `${(stats.median / scaleMs) * 100}%` }} />
    </div>
  );
}

/** One row of the timing table: a series' figures, or why it was not timed. */
type TimedRow = { label: string; stats: Stats | null; note?: string; color: string; speed?: number | null };

function TimingRow({ row, scaleMs, compact }: { row: TimedRow; scaleMs: number; compact: boolean }) {
  return (
    <tr>
      <td>
        <b>{row.label}</b>
      </td>
      {row.stats ? (
        <>
          <td className="num">{ms(row.stats.median)}</td>
          <td>
            <IntervalBar stats={row.stats} scaleMs={scaleMs} color={row.color} />
          </td>
          {compact ? null : (
            <>
              <td className="num pair">
                <span className="figure">{ms(row.stats.mean)}</span> <span className="figure">± {ms(row.stats.std)}</span>
              </td>
              <td className="num pair">
                <span className="figure">{ms(row.stats.min)}</span> <span className="figure">/ {ms(row.stats.max)}</span>
              </td>
            </>
          )}
          <td className="num">{row.stats.n}</td>
          <td className="num">{row.label === 'candidate' ? '' : <b>{speedup(row.speed ?? null)}</b>}</td>
        </>
      ) : (
        <td colSpan={compact ? 4 : 6} className="muted wrap">
          not timed{row.note ? `: ${row.note}` : ''}
        </td>
      )}
    </tr>
  );
}

/** The figures under the table: the speedup over the best baseline, the share of speed of light, where the baselines came from. */
function TimingFigures({
  timing,
  speedOfLight,
  compact,
}: {
  timing: NonNullable<Result['timing']>;
  speedOfLight: CandidateDetail['speedOfLight'];
  compact: boolean;
}) {
  return (
    <dl className="kv" style={{ marginTop: 12 }}>
      <dt>speedup vs best baseline</dt>
      <dd>
        <b>{speedup(timing.speedup_vs_best)}</b> <span className="faint">(the faster of eager and torch.compile)</span>
      </dd>
      <dt>share of speed of light</dt>
      <dd data-testid="speed-of-light">
        {speedOfLight ? (
          <>
            <b>{share(speedOfLight.share)}</b>{' '}
            <span className="faint">
              of the roofline bound, {ms(speedOfLight.lowerBoundMs)}
              {compact ? '' : ` (${bytes(speedOfLight.bytes)} moved${speedOfLight.flops ? `, ${count(speedOfLight.flops)} FLOPs` : ''})`}
            </span>
          </>
        ) : (
          <span className="muted">not measured{compact ? '' : ': the evaluator reported no roofline bound for this result'}</span>
        )}
      </dd>
      {timing.baseline_cached !== undefined ? (
        <>
          <dt>baselines</dt>
          <dd className="muted">{timing.baseline_cached ? 'from the baseline cache' : 'timed for this evaluation'}</dd>
        </>
      ) : null}
    </dl>
  );
}

/**
 * The candidate's timings against eager and torch.compile: median, 95% interval, spread and
 * count, the speedups, and the share of speed of light where the evaluator measured a bound.
 */
export function TimingTable({ result, speedOfLight, compact = false }: { result: Result; speedOfLight: CandidateDetail['speedOfLight']; compact?: boolean }) {
  const timing = result.timing;
  if (!timing) {
    return <p className="muted">No timings: only a correct candidate is timed ({result.verdict.replace(/_/g, ' ')} here).</p>;
  }
  const rows: TimedRow[] = [
    { label: 'candidate', stats: timing.candidate_ms, color: '#0969da' },
    {
      label: 'eager',
      stats: timing.eager_ms,
      color: '#59636e',
      speed: timing.speedup_vs_eager,
      ...(timing.eager_unavailable ? { note: timing.eager_unavailable } : {}),
    },
    {
      label: 'torch.compile',
      stats: timing.compile_ms,
      color: '#8250df',
      speed: timing.speedup_vs_compile,
      ...(timing.compile_unavailable ? { note: timing.compile_unavailable } : {}),
    },
  ];
  const scaleMs = Math.max(...rows.flatMap((row) => (row.stats ? [row.stats.ci95[1], row.stats.median] : []))) * 1.08;
  return (
    <div>
      <div className="table-scroll">
        <table className="data figures" data-testid="timing-table">
          <thead>
            <tr>
              <th />
              <th className="num">median</th>
              <th>95% interval</th>
              {compact ? null : (
                <>
                  <th className="num">mean ± std</th>
                  <th className="num">min / max</th>
                </>
              )}
              <th className="num">n</th>
              <th className="num">candidate is</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <TimingRow key={row.label} row={row} scaleMs={scaleMs} compact={compact} />
            ))}
          </tbody>
        </table>
      </div>
      <TimingFigures timing={timing} speedOfLight={speedOfLight} compact={compact} />
    </div>
  );
}
