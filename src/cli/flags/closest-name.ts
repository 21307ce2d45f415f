/**
 * The name among `names` that `text` most likely meant (a typo or a truncation), or null: the
 * smallest edit distance (insertions, deletions, substitutions) within a third of the longer
 * name's length, rounded (`fle` is 2 from `files`), at least 1 and at most 3.
 *
 * @example
 * closestName('file', ['openai', 'files']); // 'files'
 */
export function closestName(text: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const distance = editDistance(text.toLowerCase(), name.toLowerCase());
    const allowed = Math.min(3, Math.max(1, Math.round(Math.max(text.length, name.length) / 3)));
    if (distance <= allowed && distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= to.length; column += 1) {
      const substitution = previous[column - 1]! + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[to.length]!;
}
