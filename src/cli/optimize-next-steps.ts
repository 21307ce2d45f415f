import path from 'node:path';
import type { RunReport } from '../agent/report/run-report.js';
import { resolveStorePath } from '../store/open-run-store.js';

/** Best kernels named one by one before the folder is named instead. */
const NAMED_KERNELS = 3;

export interface NextStepsOptions {
  /** The store the run wrote (absolute). */
  storePath: string;
  /** Where paths are shown relative to. */
  cwd: string;
}

/**
 * What to do after `kforge optimize`, for its stderr: where each problem's best kernel and its
 * verdict were written (the folder when there are many), and the commands that read the run —
 * `kforge report RUN_ID` and `kforge serve` (with `--store` when the run's store is not the
 * default one, so that both read the same store). A stopped or paused run is resumed first.
 *
 * @example
 * nextSteps(report, { storePath, cwd });
 * // best kernel: kforge-out/02_gelu.py (its verdict: kforge-out/02_gelu.verdict.json)
 * // next: kforge report 20261207-061317-a333d5   the run's report: verdicts, speed-ups, tokens and cost
 * //       kforge serve                           the dashboard at http://127.0.0.1:4319: every candidate, its code and verdict
 */
export function nextSteps(report: RunReport, options: NextStepsOptions): string {
  const shown = (file: string): string => {
    const relative = path.relative(options.cwd, file);
    return relative && !relative.startsWith('..') ? relative : file;
  };
  const lines: string[] = [];
  const best = report.problems.flatMap((problem) => (problem.best ? [problem.best] : []));
  if (best.length === 0) {
    lines.push('no kernel was written: no candidate was evaluated');
  } else if (best.length <= NAMED_KERNELS) {
    for (const kernel of best) {
      const mark = kernel.verdict === 'correct' ? '' : ` — ${kernel.verdict}, the furthest any candidate got`;
      lines.push(`best kernel: ${shown(kernel.kernelPath)} (its verdict: ${shown(kernel.verdictPath)})${mark}`);
    }
  } else {
    const correct = best.filter((kernel) => kernel.verdict === 'correct').length;
    lines.push(
      `best kernels: ${best.length} in ${shown(path.dirname(best[0]!.kernelPath))}${path.sep} (PROBLEM.py and PROBLEM.verdict.json each; ${correct} correct)`,
    );
  }
  const store = options.storePath === resolveStorePath({ cwd: options.cwd }) ? '' : ` --store ${shown(options.storePath)}`;
  const commands: Array<[string, string]> = [];
  if (report.status === 'stopped' || report.status === 'paused') commands.push([`kforge optimize --resume ${report.runId}${store}`, 'go on where it stopped']);
  commands.push([`kforge report ${report.runId}${store}`, "the run's report: verdicts, speed-ups, tokens and cost"]);
  commands.push([`kforge serve${store}`, 'the dashboard at http://127.0.0.1:4319: every candidate, its code and verdict']);
  const width = Math.max(...commands.map(([command]) => command.length));
  commands.forEach(([command, what], index) => {
    lines.push(`${index === 0 ? 'next:' : '     '} ${command.padEnd(width)}   ${what}`);
  });
  return `${lines.join('\n')}\n`;
}
