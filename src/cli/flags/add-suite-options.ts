import type { Command } from 'commander';

/**
 * Adds `--filter`, `--limit` and `--problems` to a command that takes a suite. Apart from the
 * flags' schema and the suite's resolution (suite-options.ts) so that `--help` loads neither.
 */
export function addSuiteOptions(command: Command): Command {
  return command
    .option('--filter <pattern>', 'only problems whose name or path matches: a substring (relu) or a glob (level1/*conv*); several separated by commas')
    .option('--limit <n>', 'only the first N problems (after --filter), in suite order')
    .option('--problems <file>', 'add the problems listed in FILE: one file or folder a line, relative to FILE, # for comments');
}
