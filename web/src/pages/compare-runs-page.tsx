import type { ReportGroupView, RunComparisonView } from '../../../src/server/api-types';
import { VerdictBadge } from '../components/badges';
import { Page } from '../components/layout';
import { ErrorState, Loading } from '../components/states';
import { cost, count, share, speedup } from '../lib/format';
import { Link, paths } from '../lib/router';
import { useApi } from '../lib/use-api';

function MetricsRow({ label, group }: { label: string; group: ReportGroupView | undefined }) {
  if (!group)
    return (
      <tr>
        <td>{label}</td>
        <td colSpan={9} className="muted">
          no problems of this level
        </td>
      </tr>
    );
  return (
    <tr>
      <td>
        <b>{label}</b>
      </td>
      <td className="num">
        {group.correctProblems}/{group.problems}
      </td>
      {group.fastP.map((row) => (
        <td className="num" key={row.p}>
          {share(row.vsEager)} <span className="faint">/ {share(row.vsBest)}</span>
        </td>
      ))}
      <td className="num">{speedup(group.geomeanSpeedupVsEager)}</td>
      <td className="num">{speedup(group.geomeanSpeedupVsCompile)}</td>
      <td className="num">{speedup(group.geomeanSpeedupVsBest)}</td>
      <td className="num">
        {count(group.inputTokens + group.outputTokens)} · {cost(group.costUsd)}
      </td>
    </tr>
  );
}

/** The two runs' metrics level by level, then over all problems. */
function MetricsPanel({ a, b, data }: { a: string; b: string; data: RunComparisonView }) {
  const levels = [...new Set([...data.a.levels, ...data.b.levels].map((group) => group.level))];
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>Metrics</h2>
        <span className="muted">fast_p vs eager / vs best baseline, over all problems of the level</span>
      </div>
      <table className="data">
        <thead>
          <tr>
            <th>run · level</th>
            <th className="num">correct</th>
            <th className="num">fast_0</th>
            <th className="num">fast_1</th>
            <th className="num">fast_1.5</th>
            <th className="num">fast_2</th>
            <th className="num">geomean vs eager</th>
            <th className="num">vs compile</th>
            <th className="num">vs best</th>
            <th className="num">tokens · cost</th>
          </tr>
        </thead>
        <tbody>
          {[...levels, 'all'].flatMap((level) => [
            <MetricsRow
              key={`a-${level}`}
              label={`${a} · ${level}`}
              group={level === 'all' ? data.a.total : data.a.levels.find((group) => group.level === level)}
            />,
            <MetricsRow
              key={`b-${level}`}
              label={`${b} · ${level}`}
              group={level === 'all' ? data.b.total : data.b.levels.find((group) => group.level === level)}
            />,
          ])}
        </tbody>
      </table>
    </div>
  );
}

/** The problems the runs share, each run's verdict and speedup, and the ratio of the two. */
function ProblemsPanel({ a, b, data }: { a: string; b: string; data: RunComparisonView }) {
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>Problems</h2>
        <span className="muted">
          ratio: {b}'s speedup over {a}'s, both against the best baseline
        </span>
      </div>
      <table className="data" data-testid="compare-runs-problems">
        <thead>
          <tr>
            <th>problem</th>
            <th>level</th>
            <th>{a}</th>
            <th className="num">vs best</th>
            <th>{b}</th>
            <th className="num">vs best</th>
            <th className="num">ratio</th>
          </tr>
        </thead>
        <tbody>
          {data.problems.map((problem) => (
            <tr key={problem.hash}>
              <td>
                <b>{problem.name}</b>
              </td>
              <td>{problem.level}</td>
              <td>
                {problem.a ? (
                  <Link to={paths.problem(a, problem.hash, problem.a.candidateId)}>
                    <VerdictBadge verdict={problem.a.verdict} />
                  </Link>
                ) : (
                  <span className="faint">not in this run</span>
                )}
              </td>
              <td className="num">{speedup(problem.a?.speedupVsBest)}</td>
              <td>
                {problem.b ? (
                  <Link to={paths.problem(b, problem.hash, problem.b.candidateId)}>
                    <VerdictBadge verdict={problem.b.verdict} />
                  </Link>
                ) : (
                  <span className="faint">not in this run</span>
                )}
              </td>
              <td className="num">{speedup(problem.b?.speedupVsBest)}</td>
              <td className="num">
                <b style={problem.ratio !== null ? { color: problem.ratio >= 1 ? 'var(--ok)' : 'var(--danger)' } : undefined}>{speedup(problem.ratio)}</b>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A run against another on the problems they share: metrics per level, then problem by problem. */
export function CompareRunsPage({ a, b }: { a: string; b: string }) {
  const { data, error, loading, reload } = useApi<RunComparisonView>(`/api/compare/runs?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  const crumbs = [{ label: 'runs', to: paths.runs() }, { label: `compare ${a} ↔ ${b}` }];
  if (loading)
    return (
      <Page crumbs={crumbs}>
        <Loading what="the comparison" />
      </Page>
    );
  if (error || !data)
    return (
      <Page crumbs={crumbs}>
        <ErrorState error={error ?? new Error('no answer')} retry={reload} what="the comparison" />
      </Page>
    );
  return (
    <Page crumbs={crumbs}>
      <div className="page-head">
        <div className="title">
          <h1>
            <Link to={paths.run(a)}>{a}</Link> ↔ <Link to={paths.run(b)}>{b}</Link>
          </h1>
          <div className="sub">
            <span>
              {data.a.run.strategy} · {data.a.run.model} · {data.a.run.backend ?? '–'}
            </span>
            <span>vs</span>
            <span>
              {data.b.run.strategy} · {data.b.run.model} · {data.b.run.backend ?? '–'}
            </span>
            <span>{data.shared} problems in common</span>
          </div>
        </div>
      </div>
      <MetricsPanel a={a} b={b} data={data} />
      <ProblemsPanel a={a} b={b} data={data} />
    </Page>
  );
}
