import { type Dispatch, type SetStateAction, useState } from 'react';
import type { RunList, RunListItem } from '../../../src/server/api-types';
import { StatusBadge } from '../components/badges';
import { Page } from '../components/layout';
import { Empty, ErrorState, Loading } from '../components/states';
import { ago, cost, count, seconds, share, speedup } from '../lib/format';
import { Link, navigate, paths } from '../lib/router';
import { useApi } from '../lib/use-api';
import { useEventStream, useThrottled } from '../lib/use-event-stream';

/** The command that makes a first run into `store`. */
const firstRun = (store: string): string =>
  `kforge optimize problems/level1/01_relu.py --backend cpu --store ${store} \\\n  --provider openai-compatible --base-url http://127.0.0.1:8000/v1 --model MODEL`;

function RunRow({ run, picked, onPick }: { run: RunListItem; picked: boolean; onPick: (picked: boolean) => void }) {
  const { totals } = run;
  return (
    <tr data-testid={`run-row-${run.id}`}>
      <td>
        <input type="checkbox" checked={picked} onChange={(event) => onPick(event.target.checked)} aria-label={`pick ${run.id} to compare`} />
      </td>
      <td>
        <Link to={paths.run(run.id)}>
          <b>{run.id}</b>
        </Link>
      </td>
      <td>
        <StatusBadge status={run.status} stopPending={run.stopPending} />
      </td>
      <td title={run.startedAt}>{ago(run.startedAt)}</td>
      <td>{run.strategy}</td>
      <td className="mono cut" title={run.model}>
        {run.model}
      </td>
      <td>{run.backend ?? '–'}</td>
      <td className="num">
        {totals.problemsSolved}/{totals.problems}
      </td>
      <td className="num">
        {share(totals.correctShare)}
        <span className="bar-share">
          <i style={{ width: `${Math.round((totals.correctShare ?? 0) * 100)}%` }} />
        </span>
      </td>
      <td className="num">
        <b>{speedup(totals.bestSpeedupVsBest)}</b>
      </td>
      <td className="num">{count(totals.inputTokens + totals.outputTokens)}</td>
      <td className="num">{cost(totals.costUsd)}</td>
      <td className="num">{seconds(totals.gpuSeconds)}</td>
    </tr>
  );
}

/** An empty store: how to make a first run into it. */
function NoRuns({ store }: { store: string }) {
  return (
    <div className="panel">
      <Empty title="No runs yet" command={firstRun(store)}>
        <p>This store ({store}) holds no runs. Start one, and it appears here as it goes:</p>
        <p className="faint">
          Any provider works (<code>--provider files --dir FOLDER</code> replays candidate files without a model). Then reload, or keep this page open.
        </p>
      </Empty>
    </div>
  );
}

/** The runs table's headings, the short ones explained on hover. */
function RunsTableHead() {
  return (
    <thead>
      <tr>
        <th />
        <th>run</th>
        <th>status</th>
        <th>started</th>
        <th>strategy</th>
        <th>model</th>
        <th>backend</th>
        <th className="num" title="problems with a correct kernel, of the run's problems">
          solved
        </th>
        <th className="num" title="correct candidates over evaluated ones">
          correct
        </th>
        <th className="num" title="the fastest correct kernel of any problem against the faster of eager and torch.compile">
          best
        </th>
        <th className="num">tokens</th>
        <th className="num">cost</th>
        <th className="num" title="time the evaluations held a device">
          device
        </th>
      </tr>
    </thead>
  );
}

/** The runs, newest first, with boxes to pick two and a button comparing them. */
function RunsPanel({ data, picked, setPicked }: { data: RunList; picked: string[]; setPicked: Dispatch<SetStateAction<string[]>> }) {
  return (
    <div className="panel">
      <div className="panel-head">
        <h2>Runs</h2>
        <span className="muted">
          {data.runs.length} in {data.store}
        </span>
        <button
          type="button"
          className="btn small"
          disabled={picked.length !== 2}
          onClick={() => navigate(paths.compareRuns(picked[0]!, picked[1]!))}
          title="pick two runs with the boxes on the left"
        >
          Compare {picked.length === 2 ? `${picked[0]} ↔ ${picked[1]}` : 'two runs'}
        </button>
      </div>
      {/* Fits 1280 px: the model (a files replay's is a whole path) is cut, short headers; narrower windows scroll the table, not the page. */}
      <div className="table-scroll">
        <table className="data runs-table">
          <RunsTableHead />
          <tbody>
            {data.runs.map((run) => (
              <RunRow
                key={run.id}
                run={run}
                picked={picked.includes(run.id)}
                onPick={(on) =>
                  setPicked((current) => (on ? [...current.filter((id) => id !== run.id), run.id].slice(-2) : current.filter((id) => id !== run.id)))
                }
              />
            ))}
          </tbody>
        </table>
      </div>
      <p className="faint" style={{ padding: '0 14px 10px', margin: 0, fontSize: 12 }}>
        Best: the fastest correct kernel of any problem against the faster of eager and torch.compile. Correct: correct candidates over evaluated ones. Device:
        the time evaluations held a device.
      </p>
    </div>
  );
}

/** Every run in the store, newest first; pick two to compare. */
export function RunsPage() {
  const { data, error, loading, reload } = useApi<RunList>('/api/runs');
  const [picked, setPicked] = useState<string[]>([]);
  const refresh = useThrottled(reload, 500);
  const live = useEventStream('/api/stream/runs', 'runs-changed', refresh);
  const body = () => {
    if (loading) return <Loading what="runs" />;
    if (error || !data) return <ErrorState error={error ?? new Error('no answer')} retry={reload} what="the runs" />;
    if (data.runs.length === 0) return <NoRuns store={data.store} />;
    return <RunsPanel data={data} picked={picked} setPicked={setPicked} />;
  };
  return (
    <Page crumbs={[{ label: 'runs' }]} live={live} {...(data ? { store: data.store } : {})}>
      {body()}
    </Page>
  );
}
