import { createTwoFilesPatch } from 'diff';

/**
 * `diff -u` output of `before` → `after` (the format git prints, with its `diff --git` line so that
 * diff2html names the files) with `context` lines around each change; empty when they are equal.
 * The diff itself is jsdiff's (the library diff2html is built on).
 */
export function unifiedDiff(before: string, after: string, names: { before: string; after: string }, context = 3): string {
  if (before === after) return '';
  const patch = createTwoFilesPatch(`a/${names.before}`, `b/${names.after}`, before, after, undefined, undefined, { context });
  // jsdiff opens with a row of `=`; git's header line goes in its place.
  return `diff --git a/${names.before} b/${names.after}\n${patch.replace(/^=+\n/, '')}`;
}
