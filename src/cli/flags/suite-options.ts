import { z } from 'zod';
import { readProblemList, selectProblems } from '../../agent/run/problem-selection.js';
import { resolveProblemFiles } from '../../agent/run/suite.js';
import { integerFlag } from './flag-schemas.js';

export { addSuiteOptions } from './add-suite-options.js';

/** The flags of every command that takes a suite, as zod fields (commander's names). */
export const suiteFlagsShape = {
  filter: z.string().min(1, 'expected `--filter` to be a pattern, got an empty string').optional(),
  limit: integerFlag('--limit').optional(),
  problems: z.string().min(1, 'expected `--problems` to name a file, got an empty string').optional(),
};

/** The suite flags as parsed. */
export interface SuiteFlags {
  filter?: string | undefined;
  limit?: number | undefined;
  problems?: string | undefined;
}

/**
 * The problem files a suite command runs on: its arguments and the `--problems` list resolved
 * (folders give their problems in natural order; each file once), or `fallback` when both are
 * empty; then `--filter` and `--limit`.
 *
 * @throws SuiteError for a path that is not a problem, an unreadable list, or a filter that keeps none.
 */
export async function resolveSuite(inputs: readonly string[], flags: SuiteFlags, cwd: string, fallback: readonly string[] = []): Promise<string[]> {
  const listed = flags.problems ? await readProblemList(flags.problems, cwd) : [];
  const named = [...inputs, ...listed];
  const files = await resolveProblemFiles(named.length > 0 ? named : fallback, cwd);
  return selectProblems(files, flags, (file) => file, cwd);
}
