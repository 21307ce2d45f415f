import path from 'node:path';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { readProblemConstants, type ProblemConstants } from '../../eval/problem/problem-constants.js';
import type { CliIo } from '../io/cli-io.js';
import { closestName } from '../flags/closest-name.js';
import { pythonExecutable } from '../io/python-executable.js';
import { parseSizeSettings, type SizeSetting } from '../flags/size-flags.js';
import { UsageError } from '../io/usage-error.js';

/** Each problem's overrides (a problem given none is absent), and a sentence per problem some `--set` left out. */
export interface ProblemOverrides {
  byProblem: Map<string, Record<string, number | boolean>>;
  notes: string[];
}

/** Problems or constants named in a message before "and N more". */
const NAMED = 8;

function listing(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, NAMED).join(', ');
  return names.length > NAMED ? `${shown} and ${names.length - NAMED} more` : shown;
}

const stem = (problem: string): string => path.basename(problem, '.py');

/** Whether `scope` (a file name with or without `.py`, or a path) names `problem` (absolute). */
function scopeNames(scope: string, problem: string, cwd: string): boolean {
  return scope === path.basename(problem) || scope === stem(problem) || path.resolve(cwd, scope) === problem;
}

function didYouMean(text: string, names: readonly string[]): string {
  const near = closestName(text, names);
  return near ? `; did you mean ${near}?` : '';
}

/**
 * The overrides each problem of a command is evaluated with (docs/sizes.md, "Several problems"):
 * a `PROBLEM:NAME=VALUE` value applies to that problem, which must have the constant; a
 * `NAME=VALUE` value to every problem that has the constant, and a problem without it keeps its
 * own value (said in `notes`). Later values win over earlier ones, and a scoped value over an
 * unscoped one. A problem whose constants could not be read gets no unscoped value (it cannot be
 * loaded, and its evaluation says so).
 *
 * @throws UsageError when a scope names none of the problems, a scoped name is not a constant of
 *   its problem, or an unscoped name is a constant of none of them.
 */
export function resolveProblemOverrides(
  problems: readonly string[],
  settings: readonly SizeSetting[],
  constantsOf: (problem: string) => ProblemConstants | undefined,
  cwd: string,
): ProblemOverrides {
  const byProblem = new Map<string, Record<string, number | boolean>>();
  const assign = (problem: string, name: string, value: number | boolean): void => {
    byProblem.set(problem, { ...byProblem.get(problem), [name]: value });
  };
  const readable = problems.filter((problem) => constantsOf(problem)?.ok === true);
  const has = (problem: string, name: string): boolean => {
    const found = constantsOf(problem);
    return found?.ok === true && found.assigned.includes(name);
  };
  const constantsNamed = (problem: string): string[] => {
    const found = constantsOf(problem);
    return found?.ok ? found.constants : [];
  };
  const unscoped = settings.filter((setting) => setting.scope === null);
  for (const setting of unscoped) {
    const holders = readable.filter((problem) => has(problem, setting.name));
    if (holders.length === 0 && readable.length > 0) throw new UsageError(noneHasMessage(setting, readable, constantsNamed));
    for (const problem of holders) assign(problem, setting.name, setting.value);
  }
  for (const setting of settings.filter((entry) => entry.scope !== null)) {
    const scope = setting.scope!;
    const matched = problems.filter((problem) => scopeNames(scope, problem, cwd));
    if (matched.length === 0) {
      const stems = [...new Set(problems.map(stem))];
      throw new UsageError(
        `--set ${setting.text}: no problem of this command is \`${scope}\` (give a problem's file name, with or without .py, or its path: ${listing(stems)}${didYouMean(scope, stems)})`,
      );
    }
    for (const problem of matched) {
      if (constantsOf(problem)?.ok === true && !has(problem, setting.name)) {
        const named = constantsNamed(problem);
        throw new UsageError(
          `--set ${setting.text}: the problem ${path.basename(problem)} has no module-level constant \`${setting.name}\` (its constants: ${listing(named)}${didYouMean(setting.name, named)})`,
        );
      }
      assign(problem, setting.name, setting.value);
    }
  }
  return { byProblem, notes: notesFor(readable, unscoped, byProblem, has, constantsNamed) };
}

function noneHasMessage(setting: SizeSetting, readable: readonly string[], constantsNamed: (problem: string) => string[]): string {
  if (readable.length === 1) {
    const named = constantsNamed(readable[0]!);
    return `--set ${setting.text}: the problem ${path.basename(readable[0]!)} has no module-level constant \`${setting.name}\` (its constants: ${listing(named)}${didYouMean(setting.name, named)})`;
  }
  const union = [...new Set(readable.flatMap(constantsNamed))];
  return `--set ${setting.text}: none of the ${readable.length} problems has a module-level constant \`${setting.name}\` (their constants: ${listing(union)}${didYouMean(setting.name, union)})`;
}

/** One sentence per problem that an unscoped value left out: which, why, and what the problem has. */
function notesFor(
  readable: readonly string[],
  unscoped: readonly SizeSetting[],
  byProblem: ProblemOverrides['byProblem'],
  has: (problem: string, name: string) => boolean,
  constantsNamed: (problem: string) => string[],
): string[] {
  const notes: string[] = [];
  for (const problem of readable) {
    const left = unscoped.filter((setting) => !has(problem, setting.name));
    const names = [...new Set(left.map((setting) => setting.name))];
    if (names.length === 0) continue;
    const given = [...new Set(left.map((setting) => `--set ${setting.text}`))].join(', ');
    const own = byProblem.has(problem) ? '' : '; it is evaluated at its own sizes';
    notes.push(
      `${given} left out for ${path.basename(problem)}, which has no module-level constant ${names.map((name) => `\`${name}\``).join(' or ')} (its constants: ${listing(constantsNamed(problem))})${own}`,
    );
  }
  return notes;
}

/**
 * The `--set` values of a command resolved against its problems ({@link resolveProblemOverrides}),
 * the problems' constants read by the worker's Python without importing torch; each note is written
 * on stderr as `command: note`. Without `--set` nothing runs. Where the constants cannot be read
 * (the worker's Python does not start), every value applies as given and the evaluation reports
 * what is wrong.
 */
export async function overridesForProblems(
  problems: readonly string[],
  set: readonly string[],
  io: CliIo,
  command: string,
): Promise<ProblemOverrides['byProblem']> {
  const settings = parseSizeSettings(set);
  if (settings.length === 0) return new Map();
  let constants: Map<string, ProblemConstants> | null = null;
  try {
    constants = await readProblemConstants({
      python: pythonExecutable(io.environment),
      workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
      environment: io.environment,
      problemPaths: problems,
    });
  } catch {
    constants = null;
  }
  const everything: ProblemConstants = { ok: true, assigned: settings.map((setting) => setting.name), constants: [] };
  const { byProblem, notes } = resolveProblemOverrides(problems, settings, (problem) => (constants ? constants.get(problem) : everything), io.cwd);
  for (const note of notes) io.stderr.write(`${command}: ${note}\n`);
  return byProblem;
}
