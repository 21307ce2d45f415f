import { createHighlighterCore, type HighlighterCore, type LanguageRegistration, type ThemedToken } from 'shiki/core';
import { createJavaScriptRegexEngine } from 'shiki/engine/javascript';
import cpp from 'shiki/langs/cpp.mjs';
import python from 'shiki/langs/python.mjs';
import githubLight from 'shiki/themes/github-light.mjs';

/**
 * Syntax highlighting of candidate files, loaded on demand (its grammars are the bulk of the
 * page's code). A candidate is Python whose triple-quoted strings hold C++ or CUDA sources for
 * `load_inline`: each part is highlighted in its own language. The JavaScript regex engine
 * avoids a WebAssembly download.
 */

/** CUDA: C++ plus the qualifiers, built-ins and launch syntax a kernel engineer looks for. */
const cuda: LanguageRegistration = {
  name: 'cuda',
  scopeName: 'source.cuda',
  displayName: 'CUDA',
  embeddedLangs: ['cpp'],
  repository: {},
  patterns: [
    {
      match: '\\b(__global__|__device__|__host__|__shared__|__constant__|__restrict__|__launch_bounds__|__forceinline__|__noinline__)\\b',
      name: 'storage.modifier.cuda',
    },
    { match: '\\b(threadIdx|blockIdx|blockDim|gridDim|warpSize)\\b', name: 'variable.language.cuda' },
    {
      match: '\\b(__syncthreads|__syncwarp|__shfl_\\w+|atomic[A-Z]\\w*|__expf|__logf|__ldg|__fmaf_rn|__float2half|__half2float)\\b',
      name: 'support.function.cuda',
    },
    { match: '<<<|>>>', name: 'keyword.operator.cuda' },
    { include: 'source.cpp' },
  ],
};

const THEME = 'github-light';
/** Files above this are shown without colours: highlighting them would stall the page. */
const MAX_HIGHLIGHT_CHARS = 200_000;

let highlighter: Promise<HighlighterCore> | undefined;

function load(): Promise<HighlighterCore> {
  highlighter ??= createHighlighterCore({ themes: [githubLight], langs: [python, cpp, cuda], engine: createJavaScriptRegexEngine({ forgiving: true }) });
  return highlighter;
}

export type CodeLanguage = 'python' | 'cpp' | 'cuda' | 'text';

/** The language of an embedded source: CUDA when it launches or declares kernels, C++ when it includes headers or uses torch::. */
export function embeddedLanguage(text: string): 'cpp' | 'cuda' | null {
  if (/__global__|<<<|cuda_runtime|__device__/.test(text)) return 'cuda';
  if (/#include|torch::|at::Tensor|\bint64_t\b/.test(text)) return 'cpp';
  return null;
}

interface Region {
  /** 0-based line of the first line inside the string. */
  first: number;
  /** 0-based line after the last line inside the string. */
  end: number;
  language: 'cpp' | 'cuda';
}

/** Triple-quoted strings that start and end on their own lines and hold C++ or CUDA. */
function embeddedRegions(source: string): Region[] {
  const regions: Region[] = [];
  const pattern = /[rRbBuU]{0,2}("""|''')([\s\S]*?)\1/g;
  for (const match of source.matchAll(pattern)) {
    const body = match[2] ?? '';
    const language = embeddedLanguage(body);
    if (!language || !body.startsWith('\n') || !/\n[ \t]*$/.test(body)) continue;
    const openLine = source.slice(0, match.index).split('\n').length - 1;
    const innerLines = body
      .slice(1)
      .replace(/\n[ \t]*$/, '')
      .split('\n').length;
    regions.push({ first: openLine + 1, end: openLine + 1 + innerLines, language });
  }
  return regions;
}

const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function renderLines(lines: ThemedToken[][]): string {
  return lines
    .map((tokens) => {
      const inner = tokens
        .map((token) => {
          const style = [
            token.color ? `color:${token.color}` : '',
            token.fontStyle && token.fontStyle & 1 ? 'font-style:italic' : '',
            token.fontStyle && token.fontStyle & 2 ? 'font-weight:600' : '',
          ]
            .filter(Boolean)
            .join(';');
          return style ? `<span style="${style}">${escapeHtml(token.content)}</span>` : escapeHtml(token.content);
        })
        .join('');
      return `<span class="line">${inner}</span>`;
    })
    .join('\n');
}

/** Plain lines, escaped, in the same markup as highlighted ones. */
export function plainHtml(source: string): string {
  return source
    .split('\n')
    .map((line) => `<span class="line">${escapeHtml(line)}</span>`)
    .join('\n');
}

/**
 * HTML of `source`, one `<span class="line">` per line. `python` sources get their embedded
 * C++/CUDA highlighted as such; `text` and very large files come back plain.
 */
export async function highlight(source: string, language: CodeLanguage): Promise<string> {
  const text = source.replace(/\n$/, '');
  if (language === 'text' || text.length > MAX_HIGHLIGHT_CHARS) return plainHtml(text);
  const shiki = await load();
  const lines = shiki.codeToTokens(text, { lang: language, theme: THEME }).tokens;
  if (language === 'python') {
    const sourceLines = text.split('\n');
    for (const region of embeddedRegions(text)) {
      const inner = sourceLines.slice(region.first, region.end).join('\n');
      const tokens = shiki.codeToTokens(inner, { lang: region.language, theme: THEME }).tokens;
      lines.splice(region.first, tokens.length, ...tokens);
    }
  }
  return renderLines(lines);
}
