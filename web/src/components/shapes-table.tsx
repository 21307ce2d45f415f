import type { CandidateDetail } from '../../../src/server/api-types';
import { error, ms, NONE, speedup } from '../lib/format';
import { VerdictBadge } from './badges';

type Result = NonNullable<CandidateDetail['evaluation']>['result'];
type Shape = NonNullable<Result['shapes']>[number];

/**
 * A shape as shapes.py writes it, with the keys no constant of the reference took.
 *
 * @example shapeValues({ values: { rows: 4, cols: 300, wide: true }, unused: ['wide'] }) // 'rows=4, cols=300, wide=true (unused: wide)'
 */
export function shapeValues(shape: Pick<Shape, 'values' | 'unused'>): string {
  const values = Object.entries(shape.values).map(([key, value]) => `${key}=${String(value)}`);
  return values.join(', ') + (shape.unused.length > 0 ? ` (unused: ${shape.unused.join(', ')})` : '');
}

/** The same text as {@link shapeValues}, breaking lines only between `key=value` pairs. */
function ShapeValuePairs({ shape }: { shape: Pick<Shape, 'values' | 'unused'> }) {
  const pairs = Object.entries(shape.values).map(([key, value]) => `${key}=${String(value)}`);
  if (shape.unused.length > 0) pairs.push(`(unused: ${shape.unused.join(', ')})`);
  return (
    <>
      {pairs.map((pair, index) => (
        <span key={pair}>
          {index === 0 ? '' : index === pairs.length - 1 && shape.unused.length > 0 ? ' ' : ', '}
          <span style={{ whiteSpace: 'nowrap' }}>{pair}</span>
        </span>
      ))}
    </>
  );
}

/** One shape of the sweep: its values, verdict, largest error and, when timed, its medians and speedups. */
function ShapeRow({ shape, compiled }: { shape: NonNullable<Result['shapes']>[number]; compiled: boolean }) {
  return (
    <tr data-testid={`shape-row-${shape.index}`}>
      <td className="num">{shape.index}</td>
      <td className="mono wrap" style={{ minWidth: '10em' }}>
        <ShapeValuePairs shape={shape} />
      </td>
      <td>
        <VerdictBadge verdict={shape.verdict} />
      </td>
      <td className="num">{error(shape.max_abs_error)}</td>
      {shape.timing ? (
        <>
          <td className="num">{ms(shape.timing.candidate_median_ms)}</td>
          <td className="num">{ms(shape.timing.eager_median_ms)}</td>
          {compiled ? <td className="num">{ms(shape.timing.compile_median_ms)}</td> : null}
          <td className="num">{speedup(shape.timing.speedup_vs_eager)}</td>
          {compiled ? <td className="num">{speedup(shape.timing.speedup_vs_compile)}</td> : null}
          <td className="num">
            <b>{speedup(shape.timing.speedup_vs_best)}</b>
          </td>
        </>
      ) : (
        <td colSpan={compiled ? 6 : 4} className="muted">
          {shape.verdict === 'correct' ? 'not timed' : NONE}
        </td>
      )}
    </tr>
  );
}

/**
 * A problem folder's sweep (docs/problems.md, "Problem folders"): each shape with its verdict, its
 * largest error, its median times and speedups, then the geometric means of a correct, timed sweep
 * and the first reason of each failing shape whose reasons are not those at the top.
 */
export function ShapesTable({ result }: { result: Result }) {
  const shapes = result.shapes ?? [];
  if (shapes.length === 0) return null;
  const lead = shapes.find((shape) => shape.verdict !== 'correct');
  const geomean = result.verdict === 'correct' ? result.shape_geomean : undefined;
  // Without torch.compile figures at any shape (torch 1.13, or no compiler) their columns say nothing.
  const compiled = shapes.some((shape) => shape.timing?.compile_median_ms != null);
  return (
    <>
      <h3>Shapes ({shapes.length} evaluated)</h3>
      <div className="table-scroll">
        <table className="data figures" data-testid="shapes-table">
          <thead>
            <tr>
              <th className="num">shape</th>
              <th>values</th>
              <th>verdict</th>
              <th className="num">max abs error</th>
              <th className="num">median</th>
              <th className="num">eager</th>
              {compiled ? <th className="num">torch.compile</th> : null}
              <th className="num">vs eager</th>
              {compiled ? <th className="num">vs compile</th> : null}
              <th className="num">vs best</th>
            </tr>
          </thead>
          <tbody>
            {shapes.map((shape) => (
              <ShapeRow key={shape.index} shape={shape} compiled={compiled} />
            ))}
          </tbody>
        </table>
      </div>
      {geomean ? (
        <p data-testid="shape-geomean" style={{ margin: '8px 0' }}>
          Geometric mean over {geomean.shapes} shapes: <b>{speedup(geomean.speedup_vs_best)}</b> vs best baseline{' '}
          <span className="muted">
            ({speedup(geomean.speedup_vs_eager)} vs eager, {speedup(geomean.speedup_vs_compile)} vs torch.compile)
          </span>
        </p>
      ) : null}
      {shapes
        .filter((shape) => shape !== lead && shape.verdict !== 'correct' && shape.reasons[0])
        .map((shape) => (
          <div className="reason" key={shape.index} data-testid="shape-reason">
            <div className="check">
              shape {shape.index} · {shape.reasons[0]!.check}
            </div>
            <div>{shape.reasons[0]!.message}</div>
          </div>
        ))}
    </>
  );
}
