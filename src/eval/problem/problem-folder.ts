import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** The reference of a problem folder (KernelBench-Hard): a KernelBench-style `Model` with module constants. */
export const REFERENCE_FILE = 'reference.py';
/** The shapes of a problem folder: `SHAPES`, a list of dicts of module constants. */
export const SHAPES_FILE = 'shapes.py';
/** A problem folder's declarations: tolerance per dtype, forbidden names, flops and bytes formulas. */
export const META_FILE = 'problem.yaml';
/**
 * The files beside a folder's reference.py that make it a problem folder and travel with it
 * wherever it is evaluated (the candidate's staged inputs, a queued job); nothing else of the
 * folder does (its `check.py`, its solutions).
 */
export const DECLARATION_FILES = [SHAPES_FILE, META_FILE] as const;
export type DeclarationFile = (typeof DECLARATION_FILES)[number];

const valuesSchema = z.record(z.string(), z.union([z.number(), z.boolean()]));

/** One shape of shapes.py as `python3 -m kforge_worker describe` prints it. */
export const problemFolderShapeSchema = z.object({
  index: z.number().int().nonnegative(),
  /** The shape as shapes.py writes it. */
  values: valuesSchema,
  /** The module constants of reference.py it sets (a key names one exactly, or by case). */
  overrides: valuesSchema,
  /** Keys that name no constant of reference.py (an input variant the folder's own harness reads). */
  unused: z.array(z.string()),
});
export type ProblemFolderShape = z.infer<typeof problemFolderShapeSchema>;

/**
 * A problem folder as the worker reads it (worker/kforge_worker/problem/problem_folder.py,
 * `describe`): paths absolute; `shapes` empty when the folder has no shapes.py.
 */
export const problemFolderSchema = z.looseObject({
  folder: z.string().min(1),
  reference: z.string().min(1),
  name: z.string().min(1),
  shapes: z.array(problemFolderShapeSchema),
  tolerance: z.unknown().optional(),
  forbidden: z.array(z.string()).default([]),
  flops_formula: z.string().nullable().optional(),
  bytes_formula: z.string().nullable().optional(),
  precision: z.string().nullable().optional(),
});
export type ProblemFolder = z.infer<typeof problemFolderSchema>;

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (info) => info.isFile(),
    () => false,
  );
}

/**
 * The problem folder `given` stands for, as the worker decides it (`folder_of`): a folder, or a
 * `reference.py` with shapes.py or problem.yaml beside it; null for a single-file problem (or a
 * path that does not exist). Absolute. Read from the file system only: nothing is run.
 */
export async function problemFolderOf(given: string): Promise<string | null> {
  const absolute = path.resolve(given);
  const info = await stat(absolute).catch(() => null);
  if (!info) return null;
  if (info.isDirectory()) return absolute;
  const folder = path.dirname(absolute);
  if (path.basename(absolute) !== REFERENCE_FILE) return null;
  return (await isFile(path.join(folder, SHAPES_FILE))) || (await isFile(path.join(folder, META_FILE))) ? folder : null;
}

/**
 * The declaration files (shapes.py, problem.yaml) present beside `problemPath` where it is a
 * folder's reference.py, as paths; none for any other problem file. Read from the file system only.
 *
 * @example await declarationsBeside('kbh/01_fp8_gemm/reference.py') // ['kbh/01_fp8_gemm/shapes.py', 'kbh/01_fp8_gemm/problem.yaml']
 */
export async function declarationsBeside(problemPath: string): Promise<string[]> {
  if (path.basename(problemPath) !== REFERENCE_FILE) return [];
  const files = DECLARATION_FILES.map((name) => path.join(path.dirname(problemPath), name));
  const present = await Promise.all(files.map(isFile));
  return files.filter((_file, index) => present[index]);
}

/**
 * Whether `folder` is a problem folder to take whole when a suite folder is walked: it holds
 * reference.py and shapes.py or problem.yaml (its other files, a check.py or a solution, are no problems).
 */
export async function holdsProblemFolder(folder: string): Promise<boolean> {
  return (await isFile(path.join(folder, REFERENCE_FILE))) && (await problemFolderOf(path.join(folder, REFERENCE_FILE))) !== null;
}

/**
 * A problem's short name: a problem folder's own name for its reference.py (`01_fp8_gemm`), else
 * the file's stem (`02_gelu`).
 */
export async function problemStem(file: string): Promise<string> {
  const folder = path.basename(file) === REFERENCE_FILE ? await problemFolderOf(file) : null;
  return folder ? path.basename(folder) : path.basename(file, '.py');
}

/**
 * A shape as a person reads it: its values as shapes.py writes them.
 *
 * @example shapeLabel({ index: 2, values: { M: 32, N: 8192, K: 8192 } }) // 'shape 2 (M=32, N=8192, K=8192)'
 */
export function shapeLabel(shape: { index: number; values: Readonly<Record<string, number | boolean>> }): string {
  const values = Object.entries(shape.values).map(([key, value]) => `${key}=${String(value)}`);
  return `shape ${shape.index}${values.length > 0 ? ` (${values.join(', ')})` : ''}`;
}
