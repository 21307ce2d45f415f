/** One fenced code block of a Markdown reply. */
export interface FencedBlock {
  /** First word of the info string, lower-cased (`python`, `cpp`); null for a bare fence. */
  language: string | null;
  /** The whole info string as written (`python title="model_new.py"`). */
  info: string;
  /** The lines between the fences, with the fence's indentation removed. */
  content: string;
  /** False when the reply ended before the closing fence (a truncated reply). */
  terminated: boolean;
  /** 0-based line of the opening fence. */
  startLine: number;
}

const OPENING_FENCE = /^([ \t]*)(`{3,}|~{3,})[ \t]*(.*?)[ \t]*$/;
const CLOSING_FENCE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

/**
 * Finds the fenced code blocks of a Markdown text, CommonMark-style: a fence is three or more
 * backticks or tildes at the start of a line (indentation allowed); it closes on a line holding
 * only a fence of the same character at least as long; an info string after a backtick fence has
 * no backticks. A block still open at the end of the text is returned with `terminated: false`.
 */
export function findFencedBlocks(text: string): FencedBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: FencedBlock[] = [];
  let open: { indent: number; fence: string; info: string; startLine: number; lines: string[] } | undefined;

  lines.forEach((line, index) => {
    if (open === undefined) {
      const match = OPENING_FENCE.exec(line);
      if (!match) return;
      const [, indent = '', fence = '', info = ''] = match;
      if (fence.startsWith('`') && info.includes('`')) return;
      open = { indent: indent.length, fence, info, startLine: index, lines: [] };
      return;
    }
    const closing = CLOSING_FENCE.exec(line);
    if (closing?.[1] && closing[1][0] === open.fence[0] && closing[1].length >= open.fence.length) {
      blocks.push(toBlock(open, true));
      open = undefined;
      return;
    }
    open.lines.push(removeIndent(line, open.indent));
  });
  if (open !== undefined) blocks.push(toBlock(open, false));
  return blocks;
}

function toBlock(open: { info: string; startLine: number; lines: string[] }, terminated: boolean): FencedBlock {
  const word = /^\{?\.?([A-Za-z0-9_+#-]+)/.exec(open.info)?.[1];
  return {
    language: word ? word.toLowerCase() : null,
    info: open.info,
    content: open.lines.join('\n'),
    terminated,
    startLine: open.startLine,
  };
}

function removeIndent(line: string, indent: number): string {
  let removed = 0;
  while (removed < indent && (line[removed] === ' ' || line[removed] === '\t')) removed++;
  return line.slice(removed);
}
