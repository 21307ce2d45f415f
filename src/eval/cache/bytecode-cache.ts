import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { acquireFileLock } from '../locks/file-lock.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';

/** Set to `0` to keep workers off the bytecode cache (to compare, or to rule it out). */
export const BYTECODE_CACHE_VARIABLE = 'KFORGE_BYTECODE_CACHE';

/** How long priming may take (it imports torch, torch.compile's stack and Triton once), in ms. */
const PRIME_TIMEOUT_MS = 600_000;

const primeAnswerSchema = z.object({
  needed: z.boolean(),
  prefix: z.string().nullable(),
  reason: z.string().optional(),
  seconds: z.number().optional(),
  reused: z.boolean().optional(),
});

export interface BytecodeCacheOptions {
  python: string;
  /** Folder holding the `kforge_worker` package. */
  workerDirectory: string;
  /** The cache folder, e.g. `<cacheRoot>/pycache`. */
  directory: string;
  /** The parent environment (filtered as a worker's is). */
  environment: NodeJS.ProcessEnv;
  logger?: Logger | undefined;
  /** Modules to prime, probe first; default the worker's own list (torch first). */
  modules?: readonly string[] | undefined;
}

/**
 * The bytecode-cache prefix workers should run with (`PYTHONPYCACHEPREFIX`), or null when the
 * installed packages carry their own bytecode (the usual case) or priming failed.
 *
 * Workers never write bytecode; where torch was installed without it, each worker would compile
 * thousands of modules from source (8-10 s of CPU each on the H200 host). A trusted
 * `python3 -m kforge_worker prime DIR` (worker/kforge_worker/build/bytecode_cache.py), run once under a
 * host-wide lock before any worker starts, fills DIR and makes it read-only; a DIR primed for the
 * same Python and torch is reused at once.
 *
 * @example const prefix = await prepareBytecodeCache({ python, workerDirectory, directory, environment: process.env });
 */
export async function prepareBytecodeCache(options: BytecodeCacheOptions): Promise<string | null> {
  if (options.environment[BYTECODE_CACHE_VARIABLE] === '0') return null;
  const directory = path.resolve(options.directory);
  await mkdir(path.dirname(directory), { recursive: true });
  const lock = await acquireFileLock(`${directory}.lock`);
  try {
    const temporary = os.tmpdir();
    const environment = buildWorkerEnvironment(options.environment, {
      homeDirectory: temporary,
      temporaryDirectory: temporary,
      workerDirectory: options.workerDirectory,
    });
    const modules = options.modules ? ['--modules', options.modules.join(',')] : [];
    const result = await execa(options.python, ['-m', 'kforge_worker', 'prime', directory, ...modules], {
      env: environment,
      extendEnv: false,
      reject: false,
      timeout: PRIME_TIMEOUT_MS,
      cwd: temporary,
    });
    const answer = result.failed ? null : parseAnswer(String(result.stdout));
    if (!answer) {
      // Info, not a warning: it costs only start-up time, and a Python that cannot run the worker at all is reported by the worker's own start, in one sentence.
      options.logger?.info(
        { exitCode: result.exitCode, stderr: String(result.stderr).slice(-2000) },
        'bytecode cache: priming failed; workers compile their modules from source',
      );
      return null;
    }
    if (answer.needed)
      options.logger?.info({ prefix: answer.prefix, seconds: answer.seconds, reused: answer.reused }, 'bytecode cache: workers read primed bytecode');
    return answer.needed ? answer.prefix : null;
  } finally {
    await lock.release();
  }
}

function parseAnswer(stdout: string): z.infer<typeof primeAnswerSchema> | null {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    const parsed = primeAnswerSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
