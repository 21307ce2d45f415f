/**
 * A unified diff of two texts, line by line (the format `diff -u` and git print), for diff2html.
 * Longest common subsequence by dynamic programming; texts too large for it are shown as one
 * replacement.
 */

type Edit = { kind: ' ' | '-' | '+'; line: string };

const MAX_CELLS = 4_000_000;

function lines(text: string): string[] {
  const split = text.split('\n');
  if (split.at(-1) === '') split.pop();
  return split;
}

function edits(a: string[], b: string[]): Edit[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head: Edit[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  const tail: Edit[] = a.slice(endA).map((line) => ({ kind: ' ', line }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    return [...head, ...midA.map((line): Edit => ({ kind: '-', line })), ...midB.map((line): Edit => ({ kind: '+', line })), ...tail];
  }
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[i * width + j] = midA[i] === midB[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const middle: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: ' ', line: midA[i]! });
      i += 1;
      j += 1;
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) {
      middle.push({ kind: '-', line: midA[i]! });
      i += 1;
    } else {
      middle.push({ kind: '+', line: midB[j]! });
      j += 1;
    }
  }
  while (i < n) middle.push({ kind: '-', line: midA[i++]! });
  while (j < m) middle.push({ kind: '+', line: midB[j++]! });
  return [...head, ...middle, ...tail];
}

/** `diff -u` output of `before` → `after` with `context` lines around each change; empty when equal. */
export function unifiedDiff(before: string, after: string, names: { before: string; after: string }, context = 3): string {
  const list = edits(lines(before), lines(after));
  if (list.every((edit) => edit.kind === ' ')) return '';
  const out = [`diff --git a/${names.before} b/${names.after}`, `--- a/${names.before}`, `+++ b/${names.after}`];
  let index = 0;
  while (index < list.length) {
    while (index < list.length && list[index]!.kind === ' ') index += 1;
    if (index >= list.length) break;
    let hunkStart = Math.max(0, index - context);
    let hunkEnd = index;
    for (;;) {
      while (hunkEnd < list.length && list[hunkEnd]!.kind !== ' ') hunkEnd += 1;
      let next = hunkEnd;
      while (next < list.length && list[next]!.kind === ' ') next += 1;
      if (next < list.length && next - hunkEnd <= context * 2) hunkEnd = next;
      else break;
    }
    hunkEnd = Math.min(list.length, hunkEnd + context);
    let oldLine = 1;
    let newLine = 1;
    for (let k = 0; k < hunkStart; k += 1) {
      if (list[k]!.kind !== '+') oldLine += 1;
      if (list[k]!.kind !== '-') newLine += 1;
    }
    const hunk = list.slice(hunkStart, hunkEnd);
    const oldCount = hunk.filter((edit) => edit.kind !== '+').length;
    const newCount = hunk.filter((edit) => edit.kind !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`);
    for (const edit of hunk) out.push(`${edit.kind}${edit.line}`);
    index = hunkEnd;
    hunkStart = hunkEnd;
  }
  return `${out.join('\n')}\n`;
}
