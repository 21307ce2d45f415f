import { lazy, Suspense, type ReactNode } from 'react';
import { Page } from './components/layout';
import { Empty, Loading } from './components/states';
import { RunPage } from './pages/run-page';
import { RunsPage } from './pages/runs-page';
import { Link, paths, useLocation } from './lib/router';

/** Pages with heavy parts (the charts, the diff) load on first visit, so the runs list opens fast. */
const ProblemPage = lazy(() => import('./pages/problem-page').then((module) => ({ default: module.ProblemPage })));
const CompareCandidatesPage = lazy(() => import('./pages/compare-candidates-page').then((module) => ({ default: module.CompareCandidatesPage })));
const CompareRunsPage = lazy(() => import('./pages/compare-runs-page').then((module) => ({ default: module.CompareRunsPage })));

function Deferred({ children }: { children: ReactNode }) {
  return <Suspense fallback={<Loading what="the page" />}>{children}</Suspense>;
}

const positive = (text: string | null): number | null => {
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
};

/** Picks the page for the URL. */
export function App() {
  const { path, query } = useLocation();
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (segments.length === 0) return <RunsPage />;
  if (segments[0] === 'runs' && segments.length === 2) return <RunPage key={segments[1]} runId={segments[1]!} />;
  if (segments[0] === 'runs' && segments[2] === 'problems' && segments.length === 4) {
    return (
      <Deferred>
        <ProblemPage key={`${segments[1]}/${segments[3]}`} runId={segments[1]!} problemHash={segments[3]!} candidateId={positive(query.get('candidate'))} />
      </Deferred>
    );
  }
  if (segments[0] === 'compare' && segments[1] === 'candidates') {
    const a = positive(query.get('a'));
    const b = positive(query.get('b'));
    if (a !== null && b !== null)
      return (
        <Deferred>
          <CompareCandidatesPage key={`${a}-${b}`} a={a} b={b} />
        </Deferred>
      );
  }
  if (segments[0] === 'compare' && segments[1] === 'runs' && query.get('a') && query.get('b')) {
    return (
      <Deferred>
        <CompareRunsPage key={`${query.get('a')}-${query.get('b')}`} a={query.get('a')!} b={query.get('b')!} />
      </Deferred>
    );
  }
  return (
    <Page crumbs={[{ label: 'not found' }]}>
      <div className="panel">
        <Empty title="No such page">
          <p>
            The dashboard has no page at <code>{path}</code>. <Link to={paths.runs()}>See every run</Link>.
          </p>
        </Empty>
      </div>
    </Page>
  );
}
