import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SuiteError } from './suite-error.js';

/** Which problems of a suite to take: `--problems FILE`, `--filter PATTERN`, `--limit N`. */
export interface ProblemSelection {
  /** Patterns separated by commas; a problem is kept when any matches its name or path (see {@link matchesProblem}). */
  filter?: string | undefined;
  /** The first N problems left after the filter, in suite order. */
  limit?: number | undefined;
}

/**
 * The entries of a problem-list file: one problem file or folder per line, relative to the list's
 * own folder; blank lines and `#` comments are skipped.
 *
 * @returns Absolute paths, in the file's order.
 * @throws SuiteError when the file cannot be read or lists nothing.
 */
export async function readProblemList(file: string, cwd: string): Promise<string[]> {
  const absolute = path.resolve(cwd, file);
  const text = await readFile(absolute, 'utf8').catch((error: unknown) => {
    throw new SuiteError(`cannot read the problem list ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, file, { cause: error });
  });
  const entries = text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0)
    .map((line) => path.resolve(path.dirname(absolute), line));
  if (entries.length === 0) throw new SuiteError(`the problem list ${file} names no problem (one path a line; # starts a comment)`, file);
  return entries;
}

/**
 * A pattern as a regular expression: `*` any run of characters but `/`, `**` any run, `?` one
 * character; without wildcards, a substring. Case-insensitive. (Three wildcards need no glob library.)
 */
function patternExpression(pattern: string): RegExp {
  if (!/[*?]/.test(pattern)) return new RegExp(pattern.replace(/[.+^${}()|[\]\\*?]/g, '\\$&'), 'i');
  const body = pattern
    .split(/(\*\*|\*|\?)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`(^|/)${body}$`, 'i');
}

/**
 * Whether a problem matches one `--filter` pattern: its file stem (`19_ReLU`), file name, or path
 * relative to `root` (`level1/19_ReLU.py`). `relu` and `level1/*conv*` both work.
 */
export function matchesProblem(file: string, pattern: string, root: string): boolean {
  const expression = patternExpression(pattern.trim());
  const relative = path.relative(root, file).split(path.sep).join('/');
  const name = path.basename(file);
  return [name.replace(/\.py$/, ''), name, relative].some((text) => expression.test(text));
}

/**
 * The problems a selection keeps, in their order: those matching any `filter` pattern, then the
 * first `limit`.
 *
 * @throws SuiteError when the filter keeps none (saying how many there were).
 */
export function selectProblems<T>(items: readonly T[], selection: ProblemSelection, fileOf: (item: T) => string, root: string): T[] {
  const patterns = (selection.filter ?? '')
    .split(',')
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern.length > 0);
  const kept = patterns.length === 0 ? [...items] : items.filter((item) => patterns.some((pattern) => matchesProblem(fileOf(item), pattern, root)));
  if (kept.length === 0)
    throw new SuiteError(
      `no problem matches --filter ${selection.filter} (of ${items.length}); it is matched against each problem's name and path`,
      selection.filter ?? '',
    );
  return selection.limit === undefined ? kept : kept.slice(0, selection.limit);
}
