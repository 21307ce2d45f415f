import { findFencedBlocks, type FencedBlock } from './fenced-blocks.js';

/** Where the extracted code came from. */
export type ExtractionSource = 'fenced-block' | 'unterminated-fence' | 'bare-reply';

/** A candidate found in a reply. */
export interface ExtractedCandidate {
  code: string;
  /** The block's language tag, or null (untagged fence, bare reply). */
  language: string | null;
  from: ExtractionSource;
  /** Fenced blocks in the reply, all languages. */
  blockCount: number;
}

export const EXTRACTION_ERRORS = ['empty-reply', 'no-code', 'no-model-new'] as const;
export type ExtractionError = (typeof EXTRACTION_ERRORS)[number];

/** A reply without a usable candidate. `message` is written to be fed back to the model. */
export interface ExtractionFailure {
  error: ExtractionError;
  message: string;
  blockCount: number;
}

export type CandidateExtraction = ExtractedCandidate | ExtractionFailure;

const PYTHON_LANGUAGES = new Set([null, 'python', 'py', 'python3', 'py3', 'ipython', 'pycon']);

/** A Python class statement for ModelNew (a C++ `class ModelNew : public …{` does not match). */
const DEFINES_MODEL_NEW = /^[ \t]*class[ \t]+ModelNew\b[^\n]*:[ \t]*(?:#[^\n]*)?$/m;
/** A module-level `ModelNew = SomeClass` (KernelBench-Hard's solutions alias their `Model` so). */
const ALIASES_MODEL_NEW = /^ModelNew[ \t]*(?::[^=\n]*)?=[ \t]*[A-Za-z_][\w.]*[ \t]*(?:#[^\n]*)?$/m;
/** A module-level Python class statement for `Model`: a file's own `Model` is its candidate to the worker. */
const DEFINES_OWN_MODEL = /^class[ \t]+Model\b[^\n]*:[ \t]*(?:#[^\n]*)?$/m;

/**
 * How surely a piece of code is a candidate, as the worker reads one (worker/kforge_worker/build/build.py):
 * 2 where it defines or names `ModelNew`, 1 where it defines a `class Model` of its own (which
 * the worker takes as the candidate when there is no `ModelNew`), 0 otherwise.
 */
function candidateRank(code: string): 0 | 1 | 2 {
  if (DEFINES_MODEL_NEW.test(code) || ALIASES_MODEL_NEW.test(code)) return 2;
  return DEFINES_OWN_MODEL.test(code) ? 1 : 0;
}

/** Lines that start Python code, for trimming prose before a bare reply. */
const CODE_START = /^(?:import\s|from\s+\S+\s+import\s|class\s|def\s|@|#|"""|''')/;

const ASK =
  'Reply with the complete candidate in one ```python code block that defines ' +
  '`class ModelNew(torch.nn.Module)` with the same constructor and forward signature as `Model`.';

/** What a candidate must define, as a failure names it: both names the worker accepts. */
const NEITHER = '`class ModelNew` (nor a `class Model` of its own, the name KernelBench-Hard solutions use)';

/**
 * Extracts the candidate program from a model's reply: code the worker accepts as a candidate
 * file, one that defines `class ModelNew`, binds `ModelNew = SomeClass`, or (KernelBench-Hard's
 * form) defines a `class Model` of its own.
 *
 * - Fenced blocks (```python, ```py, ```, ~~~, longer fences): a block defining or naming
 *   `ModelNew` wins, else one defining its own `class Model` (a reply that quotes the reference
 *   `Model` and then gives its `ModelNew` yields the latter); among several, the last complete one
 *   (models put their final version last); Python-tagged blocks before others. Blocks in other
 *   languages (```cpp, ```cuda) are never merged in: a Python block that refers to them by a
 *   placeholder is returned as it is, and fails to build.
 * - A final fence the reply never closed (a truncated reply) is used when nothing better exists.
 * - A reply without fences that defines a candidate so is taken from its first line of code.
 * - `<think>…</think>` sections (reasoning models served raw) are ignored.
 *
 * A reply with no usable code is a failure value, never an exception.
 */
export function extractCandidate(replyText: string): CandidateExtraction {
  const answer = withoutThinking(replyText);
  if (answer.trim() === '') {
    const message = replyText.trim() === '' ? 'The reply was empty.' : 'The reply ended inside its thinking section.';
    return { error: 'empty-reply', message: `${message} ${ASK}`, blockCount: 0 };
  }
  const blocks = findFencedBlocks(answer).filter((block) => block.content.trim() !== '');
  if (blocks.length > 0) return fromBlocks(blocks);
  if (candidateRank(answer) > 0) {
    return { code: trimLeadingProse(answer), language: null, from: 'bare-reply', blockCount: 0 };
  }
  if (looksLikePython(answer)) {
    return {
      error: 'no-model-new',
      message: `The reply's code does not define ${NEITHER}. ${ASK}`,
      blockCount: 0,
    };
  }
  return { error: 'no-code', message: `The reply contained no code. ${ASK}`, blockCount: 0 };
}

/** Type guard for the failure side of `extractCandidate`. */
export function isExtractionFailure(result: CandidateExtraction): result is ExtractionFailure {
  return 'error' in result;
}

function fromBlocks(blocks: FencedBlock[]): CandidateExtraction {
  const ranks = blocks.map((block) => candidateRank(block.content));
  const best = Math.max(...ranks);
  const candidates = blocks.filter((_block, index) => best > 0 && ranks[index] === best);
  const python = candidates.filter((block) => PYTHON_LANGUAGES.has(block.language));
  const pool = python.length > 0 ? python : candidates;
  const chosen = pool.filter((block) => block.terminated).at(-1) ?? pool.at(-1);
  if (chosen) {
    return {
      code: ensureTrailingNewline(chosen.content),
      language: chosen.language,
      from: chosen.terminated ? 'fenced-block' : 'unterminated-fence',
      blockCount: blocks.length,
    };
  }
  const languages = [...new Set(blocks.map((block) => block.language ?? 'untagged'))].join(', ');
  return {
    error: 'no-model-new',
    message:
      `The reply has ${blocks.length} code block(s) (${languages}) but none defines ${NEITHER}. ` +
      `Put the C++/CUDA source inside the Python file as strings passed to load_inline. ${ASK}`,
    blockCount: blocks.length,
  };
}

function withoutThinking(text: string): string {
  const closing = /<\/(?:think|thinking|reasoning)>/gi;
  let lastClose = -1;
  for (const match of text.matchAll(closing)) lastClose = match.index + match[0].length;
  if (lastClose >= 0) return text.slice(lastClose);
  const opening = /<(?:think|thinking|reasoning)>/i.exec(text);
  return opening ? text.slice(0, opening.index) : text;
}

function trimLeadingProse(text: string): string {
  const lines = text.split(/\r?\n/);
  const first = lines.findIndex((line) => CODE_START.test(line));
  return ensureTrailingNewline(lines.slice(Math.max(0, first)).join('\n').trimEnd());
}

function looksLikePython(text: string): boolean {
  return /^(?:import\s+\w|from\s+\S+\s+import\s|def\s+\w+\s*\(|class\s+\w+)/m.test(text);
}

function ensureTrailingNewline(code: string): string {
  return code.endsWith('\n') ? code : `${code}\n`;
}
