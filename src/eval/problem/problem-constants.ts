import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { buildWorkerEnvironment } from '../process/worker-environment.js';

const entrySchema = z.union([
  z.object({ problem: z.string(), assigned: z.array(z.string()), constants: z.array(z.string()) }),
  z.object({ problem: z.string(), error: z.string() }),
]);
const outputSchema = z.object({ problems: z.array(entrySchema) });

/** The module constants of one problem file, read from its source (nothing of it runs). */
export type ProblemConstants =
  /**
   * `assigned`: every name the file assigns at its top level (what an override may name);
   * `constants`: those named to a person (no private names, no `KFORGE_*` declarations).
   */
  | { ok: true; assigned: string[]; constants: string[] }
  /** The file cannot be read or parsed: its evaluation reports that itself (`invalid_input`). */
  | { ok: false; message: string };

export interface ProblemConstantsOptions {
  python: string;
  workerDirectory: string;
  environment: NodeJS.ProcessEnv;
  problemPaths: readonly string[];
  /** Limit on the process, ms. Default 60 000. */
  timeoutMs?: number;
}

/**
 * The module constants of each problem file, by path, in one short Python process that imports
 * no torch (`python3 -m kforge_worker constants`, worker/kforge_worker/roles/constants_command.py):
 * the same names the worker's overrides accept (overrides.py).
 *
 * @throws Error when the command does not run or prints something else than its JSON: the worker
 *   environment itself is broken, which the evaluation would report anyway.
 */
export async function readProblemConstants(options: ProblemConstantsOptions): Promise<Map<string, ProblemConstants>> {
  const found = new Map<string, ProblemConstants>();
  const paths = [...new Set(options.problemPaths)];
  if (paths.length === 0) return found;
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'kforge-constants-'));
  try {
    const env = buildWorkerEnvironment(options.environment, { homeDirectory: scratch, temporaryDirectory: scratch, workerDirectory: options.workerDirectory });
    const result = await execa(options.python, ['-m', 'kforge_worker', 'constants', ...paths], {
      cwd: scratch,
      env,
      extendEnv: false,
      reject: false,
      timeout: options.timeoutMs ?? 60_000,
    });
    let parsed: z.infer<typeof outputSchema>;
    try {
      parsed = outputSchema.parse(JSON.parse(String(result.stdout).trim()));
    } catch {
      const said = String(result.stderr).trim().split('\n').at(-1) ?? '';
      throw new Error(`\`${options.python} -m kforge_worker constants\` printed no result (exit status ${result.exitCode ?? result.signal}): ${said}`);
    }
    for (const entry of parsed.problems) {
      found.set(entry.problem, 'error' in entry ? { ok: false, message: entry.error } : { ok: true, assigned: entry.assigned, constants: entry.constants });
    }
    return found;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
