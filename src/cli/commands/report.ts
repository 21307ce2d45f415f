import type { Command } from 'commander';
import { REPORT_FORMATS } from '../../server/report/report-formats.js';
import { DEFAULT_STORE_PATH } from '../../store/sqlite/default-store-path.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import type { ReportCommandDependencies } from './report-action.js';

export type { ReportCommandDependencies } from './report-action.js';

/**
 * Adds `kforge report RUN_ID [--format md|html|csv|json] [--store PATH] [--out FILE]`: per
 * problem and per level, verdicts, `fast_p` at 0, 1, 1.5 and 2, geometric-mean speedups against
 * eager, compile and the best baseline, share of speed of light, tokens and cost. The HTML report
 * is one self-contained file with its plots. Exit status 0, or 2 for misuse (unknown run, missing
 * store, bad flag).
 */
export function registerReportCommand(program: Command, dependencies: ReportCommandDependencies = {}): Command {
  return program
    .command('report')
    .description(COMMAND_DESCRIPTIONS.report)
    .argument('<run-id>', 'a run id, as `kforge runs list` prints it')
    .option('--format <format>', `${REPORT_FORMATS.join(', ')} (default md)`)
    .option('--store <path>', `the store database (default ${DEFAULT_STORE_PATH})`)
    .option('--out <file>', 'write the report to this file instead of standard output')
    .action(async (runId: string, rawOptions: unknown) => {
      // Loaded only now: the store and the report's renderers are for running, not for `--help`.
      const { reportAction } = await import('./report-action.js');
      await reportAction(runId, rawOptions, dependencies);
    });
}
