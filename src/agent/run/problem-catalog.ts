import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveProblemFiles } from './suite.js';

/** A problem of a suite folder, as `kforge problems list` shows it. */
export interface CatalogProblem {
  /** The level folder (`level1`), `other` when the file is not under one. */
  level: string;
  /** The file stem (`01_relu`). */
  name: string;
  /** Absolute path. */
  path: string;
  /** The `KFORGE_PRESETS` entries the problem defines (`cpu`, `gpu`), in file order; empty for a plain KernelBench file. */
  presets: string[];
  /** The first line of the module docstring; empty when there is none. */
  summary: string;
}

/** The top-level keys of the dict literal starting at `open` (the index of its `{`). */
function dictKeys(source: string, open: number): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let index = open; index < source.length; index++) {
    const character = source[index]!;
    if (character === '{' || character === '[' || character === '(') depth++;
    else if (character === '}' || character === ']' || character === ')') {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1 && (character === '"' || character === "'")) {
      const end = source.indexOf(character, index + 1);
      if (end < 0) break;
      if (/^\s*:/.test(source.slice(end + 1))) keys.push(source.slice(index + 1, end));
      index = end;
    }
  }
  return keys;
}

/** The preset names of `KFORGE_PRESETS = {...}` in a problem's source (read as text, never run). */
export function presetNames(source: string): string[] {
  const match = /^KFORGE_PRESETS\s*(?::[^=]*)?=\s*\{/m.exec(source);
  return match ? dictKeys(source, match.index + match[0].length - 1) : [];
}

/** The first line of the module docstring. */
export function docstringSummary(source: string): string {
  const match = /^\s*(?:#[^\n]*\n\s*)*[rRuU]?("""|''')\s*([^\n]*)/.exec(source);
  return match?.[2]?.replace(/("""|''')\s*$/, '').trim() ?? '';
}

/**
 * The problems under a suite folder (KernelBench layout: `level1/`, `level2/` …), each with its
 * level, name, presets and one-line summary, in natural path order.
 *
 * @example await listCatalogProblems(path.join(REPOSITORY_ROOT, 'problems'))
 * @throws SuiteError when the folder is missing or holds no problem.
 */
export async function listCatalogProblems(folder: string): Promise<CatalogProblem[]> {
  const files = await resolveProblemFiles([folder]);
  return Promise.all(
    files.map(async (file) => {
      const source = await readFile(file, 'utf8');
      const level = /^level\d+$/i.exec(path.basename(path.dirname(file)))?.[0].toLowerCase() ?? 'other';
      return { level, name: path.basename(file, '.py'), path: file, presets: presetNames(source), summary: docstringSummary(source) };
    }),
  );
}
