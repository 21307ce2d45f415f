/**
 * The compiler's first error with the source line and caret it printed under it, from the full
 * build log of a `compile_error` (gcc/clang: `file:line:col: error:` then `  9 | code` and
 * `    |   ^~~`; nvcc: `file(line): error:` then the code line and a line holding only `^`).
 * Paths lose their folders (the build folder is a hash nobody needs to read).
 */
export function compilerErrorExcerpt(compilerOutput: string | undefined): string[] | null {
  if (!compilerOutput) return null;
  const lines = compilerOutput.split(/\r?\n/);
  const start = lines.findIndex((line) => /(:\d+(:\d+)?: (fatal )?error:)|(\(\d+\): (catastrophic )?error:)/.test(line));
  if (start === -1) return null;
  const excerpt = [lines[start]!];
  const following = lines.slice(start + 1, start + 7);
  const gccContext = following.findIndex((line) => !/^\s*\d*\s*\|/.test(line));
  if (gccContext !== 0) {
    excerpt.push(...following.slice(0, gccContext === -1 ? following.length : gccContext));
  } else {
    const caret = following.findIndex((line) => /^\s*\^\s*$/.test(line));
    if (caret > 0) excerpt.push(...following.slice(0, caret + 1));
  }
  return excerpt.map(withoutFolders);
}

/** `/tmp/…/builds/ab12…/ext/main.cpp:9:42` → `main.cpp:9:42`, for every absolute path of a source file. */
function withoutFolders(line: string): string {
  return line.replace(/(?:\/[^\s/:()'"‘’]+)+\/([^\s/:()'"‘’]+\.(?:cpp|cc|cxx|cu|cuh|h|hpp|c))\b/g, '$1');
}
