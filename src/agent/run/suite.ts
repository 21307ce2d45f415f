import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { holdsProblemFolder, REFERENCE_FILE } from '../../eval/problem/problem-folder.js';
import { SuiteError } from './suite-error.js';

/** A Python file that defines the reference: `class Model(...)` at the top level. */
const DEFINES_MODEL = /^class\s+Model\s*[(:]/m;

const SKIPPED_FOLDERS = new Set(['__pycache__', 'node_modules', '.git']);

/** Paths in natural order, so `2_x.py` comes before `10_x.py` as in KernelBench's levels. */
function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/**
 * The `.py` files under a folder; a problem folder (reference.py with shapes.py or problem.yaml)
 * gives its reference.py alone, never its check.py or a solution beside it.
 */
async function pythonFilesUnder(folder: string): Promise<string[]> {
  if (await holdsProblemFolder(folder)) return [path.join(folder, REFERENCE_FILE)];
  const entries = await readdir(folder, { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await pythonFilesUnder(full)));
    else if (entry.isFile() && entry.name.endsWith('.py')) found.push(full);
  }
  return found;
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (info) => info.isFile(),
    () => false,
  );
}

async function definesModel(file: string): Promise<boolean> {
  return DEFINES_MODEL.test(await readFile(file, 'utf8'));
}

/**
 * Resolves `kforge optimize` arguments into problem files: a file is taken as it is (it must be a
 * `.py` file defining `class Model`); a problem folder (docs/problems.md: reference.py with
 * shapes.py or problem.yaml, or any folder holding reference.py when named itself) is its
 * reference.py, whose shapes the evaluator sweeps; another folder contributes every `*.py` under
 * it that defines `class Model` (a KernelBench level folder works; helper modules are skipped),
 * and each problem folder under it. Each folder's files are in natural order; arguments keep their
 * order; a file named twice counts once.
 *
 * @returns Absolute paths.
 * @throws SuiteError for a missing path, a file that is not a problem, or a folder with none.
 */
export async function resolveProblemFiles(inputs: readonly string[], cwd = process.cwd()): Promise<string[]> {
  if (inputs.length === 0) throw new SuiteError('expected at least one problem file or folder', '');
  const resolved: string[] = [];
  for (const input of inputs) {
    const absolute = path.resolve(cwd, input);
    const info = await stat(absolute).catch((error: unknown) => {
      throw new SuiteError(`no such file or folder: ${input}`, input, { cause: error });
    });
    if (info.isDirectory() && (await isFile(path.join(absolute, REFERENCE_FILE)))) {
      resolved.push(path.join(absolute, REFERENCE_FILE));
    } else if (info.isDirectory()) {
      const files = (await pythonFilesUnder(absolute)).sort(naturalOrder);
      const problems: string[] = [];
      for (const file of files) if (await definesModel(file)) problems.push(file);
      if (problems.length === 0) throw new SuiteError(`no problem file (a .py defining \`class Model\`) under ${input}`, input);
      resolved.push(...problems);
    } else if (!absolute.endsWith('.py') || !(await definesModel(absolute))) {
      throw new SuiteError(`${input} is not a problem file: expected a .py file defining \`class Model\``, input);
    } else {
      resolved.push(absolute);
    }
  }
  return [...new Set(resolved)];
}
