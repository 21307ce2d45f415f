import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import type { Precision, Preset } from '../../core/verdict.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';

/** What `python3 -m kforge_worker estimate` prints (worker/kforge_worker/roles/estimate_command.py). */
export const sizeEstimateSchema = z.looseObject({
  problem: z.string(),
  problem_overrides: z.record(z.string(), z.union([z.number(), z.boolean()])).nullable(),
  constants: z.record(z.string(), z.number()),
  input_bytes: z.number(),
  parameter_bytes: z.number(),
  output_bytes: z.number(),
  forward_peak_bytes: z.number(),
  forward_method: z.enum(['fake', 'assumed']),
  reference_bytes: z.number(),
  candidate_bytes: z.number(),
  evaluation_bytes: z.number(),
  capacity_bytes: z.number().nullable(),
  fits: z.boolean().nullable(),
  fit: z.object({ overrides: z.record(z.string(), z.union([z.number(), z.boolean()])), evaluation_bytes: z.number() }).nullable(),
  /** With `time`: the evaluation's time on this host's CPU (worker/kforge_worker/roles/time_estimate.py). */
  time: z
    .looseObject({
      /** The batch constant the time was scaled by (null: the problem has none). */
      constant: z.string().nullable(),
      probes: z.array(z.object({ value: z.number(), probe_ms: z.number() })),
      /** Seconds of one evaluation at the sizes asked for (null: it could not be timed). */
      evaluation_s: z.number().nullable(),
      /** Seconds at each halving of the batch constant, the sizes asked for first. */
      sizes: z.array(z.object({ value: z.number(), evaluation_s: z.number() })).optional(),
      budget_s: z.number().nullable(),
      /** The largest halving within the budget that also fits the capacity. */
      fit: z.object({ overrides: z.record(z.string(), z.union([z.number(), z.boolean()])), evaluation_s: z.number() }).nullable(),
      /** Why the time could not be told. */
      error: z.string().nullable(),
    })
    .optional(),
});
export type SizeEstimate = z.infer<typeof sizeEstimateSchema>;

export interface SizeEstimateOptions {
  python: string;
  workerDirectory: string;
  environment: NodeJS.ProcessEnv;
  problemPath: string;
  preset?: Preset | undefined;
  precision: Precision;
  deviceType: 'cpu' | 'cuda';
  overrides?: Readonly<Record<string, number | boolean>> | undefined;
  /** Bytes the evaluation may use; with it the estimate says whether it fits and which sizes would. */
  capacityBytes?: number | null | undefined;
  timing?: boolean;
  /**
   * Also time it on this host's CPU (the reference's pace measured at small sizes; a few seconds
   * more), and with `budgetMs` find the largest halving of its batch that fits that time.
   */
  time?: { budgetMs?: number | undefined } | undefined;
  /** Limit on the estimate process, ms. Default {@link DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** Default limit on the estimate process: 120 000 ms (importing torch on a loaded machine is slow). */
export const DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS = 120_000;

/**
 * The estimate's failures that the evaluation will end in itself, as `invalid_input`: the problem file
 * cannot be loaded, or an override names a constant it lacks (worker/kforge_worker/problem/). A
 * problem whose inputs only cannot be sized without allocating (`problem-inputs`) still evaluates.
 */
const UNUSABLE_INPUT_CHECKS = new Set(['problem-load', 'problem-override']);

/** The estimate, or why there is none (the problem cannot be loaded or sized without allocating). */
export type SizeEstimateOutcome =
  | { ok: true; estimate: SizeEstimate }
  /**
   * `problem`: the estimate ran and the problem could not be sized; `input`: the problem file (or an
   * override of its constants) is unusable, which the evaluation reports as `invalid_input`
   * ({@link UNUSABLE_INPUT_CHECKS});
   * `command`: the estimate itself did not run (a worker environment that cannot start, which the
   * evaluation then reports).
   */
  | { ok: false; message: string; cause: 'problem' | 'input' | 'command' };

/**
 * An evaluation's peak memory estimated before it runs, from the problem's shapes and without
 * allocating them (the worker's FakeTensorMode estimate; docs/sizes.md), in a short Python process
 * with a worker's environment.
 */
export async function estimateEvaluationSize(options: SizeEstimateOptions): Promise<SizeEstimateOutcome> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'kforge-estimate-'));
  try {
    const env = buildWorkerEnvironment(options.environment, { homeDirectory: scratch, temporaryDirectory: scratch, workerDirectory: options.workerDirectory });
    const args = ['-m', 'kforge_worker', 'estimate', options.problemPath, '--precision', options.precision, '--device-type', options.deviceType];
    if (options.preset) args.push('--preset', options.preset);
    for (const [name, value] of Object.entries(options.overrides ?? {})) args.push('--set', `${name}=${String(value)}`);
    if (options.capacityBytes) args.push('--capacity', String(Math.floor(options.capacityBytes)));
    if (options.timing === false) args.push('--no-timing');
    if (options.time) args.push('--time');
    if (options.time?.budgetMs !== undefined) args.push('--time-budget-s', String(options.time.budgetMs / 1000));
    const result = await execa(options.python, args, {
      cwd: scratch,
      env,
      extendEnv: false,
      reject: false,
      timeout: options.timeoutMs ?? DEFAULT_SIZE_ESTIMATE_TIMEOUT_MS,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(result.stdout).trim());
    } catch {
      const said = String(result.stderr).trim().split('\n').at(-1) ?? '';
      return { ok: false, cause: 'command', message: `the size estimate printed no result (exit status ${result.exitCode ?? result.signal}): ${said}` };
    }
    const failure = z.object({ error: z.object({ message: z.string(), check: z.string().optional() }) }).safeParse(parsed);
    if (failure.success) {
      const { check, message } = failure.data.error;
      return { ok: false, cause: check !== undefined && UNUSABLE_INPUT_CHECKS.has(check) ? 'input' : 'problem', message };
    }
    const estimate = sizeEstimateSchema.safeParse(parsed);
    if (!estimate.success) return { ok: false, cause: 'command', message: `the size estimate is malformed: ${estimate.error.issues[0]?.message}` };
    return { ok: true, estimate: estimate.data };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
