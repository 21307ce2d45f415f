import path from 'node:path';
import type { RunReport } from '../../agent/report/run-report.js';
import { resolveStorePath } from '../../store/sqlite/open-run-store.js';

/** Best kernels named one by one before the folder is named instead. */
const NAMED_KERNELS = 3;

export interface NextStepsOptions {
  /** The store the run wrote (absolute). */
  storePath: string;
  /** Where paths are shown relative to. */
  cwd: string;
  /** Columns the lines must fit (the terminal's, 80 off one): a description that would not fit goes on its own line. */
  widthColumns?: number;
}

/**
 * What to do after `kforge optimize`, for its stderr: where each problem's best kernel and its
 * verdict were written (the folder when there are many), and the commands that read the run —
 * `kforge report RUN_ID` and `kforge serve` (with `--store` when the run's store is not the
 * default one, so that both read the same store). A stopped or paused run is resumed first.
 *
 * @example
 * nextSteps(report, { storePath, cwd });
 * // best kernel: kforge-out/gelu.py (its verdict: kforge-out/gelu.verdict.json)
 * // next: kforge report 20261207-061317-a333d5   the run's verdicts and speed-ups
 * //       kforge serve                           the dashboard (127.0.0.1:4319)
 * (Lines that would not fit `widthColumns` are split: the verdict file, or each command's
 * description, on a line of its own.)
 */
export function nextSteps(report: RunReport, options: NextStepsOptions): string {
  const shown = (file: string): string => {
    const relative = path.relative(options.cwd, file);
    return relative && !relative.startsWith('..') ? relative : file;
  };
  const lines: string[] = [];
  const columns = options.widthColumns ?? 80;
  const best = report.problems.flatMap((problem) => (problem.best ? [problem.best] : []));
  if (best.length === 0) {
    lines.push('no kernel was written: no candidate was evaluated');
  } else if (best.length <= NAMED_KERNELS) {
    for (const kernel of best) {
      const mark = kernel.verdict === 'correct' ? '' : ` — ${kernel.verdict}, the furthest any candidate got`;
      const line = `best kernel: ${shown(kernel.kernelPath)} (its verdict: ${shown(kernel.verdictPath)})${mark}`;
      if (line.length <= columns) lines.push(line);
      else lines.push(`best kernel: ${shown(kernel.kernelPath)}${mark}`, `  its verdict: ${shown(kernel.verdictPath)}`);
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
  commands.push([`kforge report ${report.runId}${store}`, "the run's verdicts and speed-ups"]);
  commands.push([`kforge serve${store}`, 'the dashboard (127.0.0.1:4319)']);
  const width = Math.max(...commands.map(([command]) => command.length));
  const sideBySide = commands.every(([, what]) => 6 + width + 3 + what.length <= columns);
  commands.forEach(([command, what], index) => {
    const lead = index === 0 ? 'next:' : '     ';
    if (sideBySide) lines.push(`${lead} ${command.padEnd(width)}   ${what}`);
    else lines.push(`${lead} ${command}`, `        ${what}`);
  });
  return `${lines.join('\n')}\n`;
}
