import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { CandidateNode } from '../../../src/server/api-types';
import { bestSoFar } from '../lib/best-so-far';
import { VERDICT_COLORS } from '../lib/verdicts';

/** Tick steps of a count: whole numbers only (1, 2, 5, 10, … candidates), never 1.1 or 2.5. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 50_000, 100_000];

/** The x axis of a count: whole-number ticks, half a step of room around the first and last point. */
const COUNT_SCALE: uPlot.Scale = { time: false, range: (_u, min, max) => [Math.floor(min ?? 1) - 0.5, Math.ceil(max ?? 1) + 0.5] };

/**
 * The options of one chart: the axes (whole-number ticks on a count, their labels kept on the host's
 * `data-x-ticks`), the best-so-far, candidate and baseline series, and a click that picks a point.
 */
function chartOptions(
  element: HTMLDivElement,
  { title, xLabel, countX, pick }: { title: string; xLabel: string; countX: boolean; pick: { current: (index: number) => void } },
): uPlot.Options {
  return {
    title,
    width: Math.max(320, element.clientWidth),
    height: 190,
    cursor: { points: { size: 7 } },
    legend: { show: false },
    scales: { x: countX ? COUNT_SCALE : { time: false }, y: { range: (_u, min, max) => [0, Math.max(1.2, (max ?? 1) * 1.15, min ?? 0)] } },
    axes: [
      {
        label: xLabel,
        labelSize: 16,
        size: 36,
        stroke: '#59636e',
        grid: { stroke: '#eef1f4' },
        ...(countX
          ? {
              incrs: WHOLE_STEPS,
              values: (_u: uPlot, splits: number[]) => {
                const labels = splits.map((value) => String(Math.round(value)));
                element.dataset.xTicks = labels.join(' ');
                return labels;
              },
            }
          : {}),
      },
      {
        label: 'speedup (×)',
        labelSize: 16,
        size: 44,
        stroke: '#59636e',
        grid: { stroke: '#eef1f4' },
        values: (_u, values) => values.map((value) => `${value}×`),
      },
    ],
    series: [
      {},
      { label: 'best so far', stroke: VERDICT_COLORS.correct, width: 2, paths: uPlot.paths.stepped?.({ align: 1 }), points: { show: false } },
      { label: 'candidate', stroke: '#0969da', fill: '#0969da', width: 0, paths: () => null, points: { show: true, size: 6, fill: '#0969da' } },
      { label: 'baseline', stroke: '#24292f', width: 1, dash: [4, 4], points: { show: false } },
    ],
    hooks: {
      ready: [
        (plot) => {
          plot.over.addEventListener('click', () => {
            const index = plot.cursor.idx;
            if (index !== null && index !== undefined) pick.current(index);
          });
        },
      ],
    },
  };
}

/**
 * One uPlot chart that follows its container's width. On a count axis, the labels of the x axis's
 * ticks as drawn are also on the host's `data-x-ticks` (space-separated): the canvas holds them
 * only as pixels.
 */
function Chart({
  data,
  xLabel,
  title,
  onPick,
  countX = false,
}: {
  data: uPlot.AlignedData;
  xLabel: string;
  title: string;
  onPick: (index: number) => void;
  /** The x values count things (candidates): whole-number ticks only. */
  countX?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const pick = useRef(onPick);
  pick.current = onPick;
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const options = chartOptions(element, { title, xLabel, countX, pick });
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, element.clientWidth), height: 190 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [data, xLabel, title, countX]);
  return <div ref={host} className="chart" />;
}

/**
 * Best-so-far speedup over the best baseline against candidates evaluated and against minutes
 * since the run started; dots are each correct candidate, the dashed line is 1× (the baseline).
 * Clicking a point opens its candidate.
 */
export function ProgressCharts({
  candidates,
  runStartedAt,
  onPick,
}: {
  candidates: readonly CandidateNode[];
  runStartedAt: string;
  onPick: (candidateId: number) => void;
}) {
  const series = bestSoFar(candidates, runStartedAt);
  if (series.index.length === 0)
    return <div className="panel panel-body muted">No candidate has been evaluated yet; the progress charts appear with the first verdict.</div>;
  const ones = series.index.map(() => 1);
  const byIndex: uPlot.AlignedData = [series.index, series.best, series.own, ones];
  const hours = (series.minutes.at(-1) ?? 0) > 180;
  const byTime: uPlot.AlignedData = [hours ? series.minutes.map((minutes) => minutes / 60) : series.minutes, series.best, series.own, ones];
  const choose = (index: number): void => {
    const id = series.ids[index];
    if (id !== undefined) onPick(id);
  };
  return (
    <div className="charts">
      <div className="panel panel-body" data-testid="chart-candidates">
        <Chart data={byIndex} xLabel="candidates evaluated" title="Best speedup so far, by candidate" onPick={choose} countX />
      </div>
      <div className="panel panel-body" data-testid="chart-time">
        <Chart
          data={byTime}
          xLabel={hours ? 'hours since the run started' : 'minutes since the run started'}
          title="Best speedup so far, by time"
          onPick={choose}
        />
      </div>
    </div>
  );
}
