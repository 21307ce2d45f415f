import { backendModule } from '../backends/registry.js';
import { effectiveGuardPolicy } from '../core/guard-policy.js';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { backendSchema, precisionSchema, presetSchema, toleranceProfileSchema, type EvaluationResult } from '../core/verdict.js';
import { canonicalJson } from '../core/canonical-json.js';
import { EVALUATION_DEFAULTS, resolveEvaluationSettings } from '../eval/run/evaluation-settings.js';
import type { EvaluationRequest, StageTimeoutsSeconds } from '../eval/evaluator.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from '../eval/run/stage-limits.js';
import { SIZED_STAGES } from '../eval/run/sized-stage-limits.js';
import { unreadableInput } from '../eval/run/unreadable-input.js';
import { DECLARATION_FILES, declarationsBeside, REFERENCE_FILE, type DeclarationFile } from '../eval/problem/problem-folder.js';

/** Version of the payload format; a worker refuses a payload of another version. */
export const JOB_PAYLOAD_VERSION = 1;

/** Times one job may be started (each start whose worker died counts) before it ends `crashed`. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** The largest attempts bound a payload may ask for (the workers' stall limit sits above it). */
export const MAX_ATTEMPTS_LIMIT = 20;

/** Largest problem or candidate source a job carries, in bytes of UTF-16 text (4 MiB). */
const MAX_SOURCE_LENGTH = 4 * 1024 * 1024;

const positiveSeconds = z.number().positive().finite().optional();
const timeoutsSchema = z
  .object(
    Object.fromEntries(Object.keys(DEFAULT_STAGE_TIMEOUTS_SECONDS).map((stage) => [stage, positiveSeconds])) as Record<
      keyof StageTimeoutsSeconds,
      typeof positiveSeconds
    >,
  )
  .strict();

/**
 * The options of an {@link EvaluationRequest} that travel with a job: every field filled in, so a
 * worker of another version reads the same evaluation; no paths, no `deviceIndex` (a worker times
 * on its own devices) and no `deviceWaitMs` (a worker waits for its own device as long as it must).
 * A worker that does not know an option refuses the payload rather than evaluate without it.
 */
export const evaluationJobOptionsSchema = z
  .object({
    backend: backendSchema,
    precision: precisionSchema,
    tolerance: toleranceProfileSchema,
    preset: presetSchema,
    trials: z.number().int().positive(),
    perfTrials: z.number().int().positive(),
    warmupTrials: z.number().int().nonnegative(),
    refreshBaselines: z.boolean(),
    skipTiming: z.boolean(),
    /**
     * The per-stage limits in seconds that the request set (`--timeout-<stage>`); the others are the
     * worker's: its defaults, and the limits it sizes by the reference's measured time
     * (docs/sizes.md, "Stage limits"), which only the machine that evaluates can measure.
     */
    timeoutsSeconds: timeoutsSchema,
    guardPolicy: z.string().min(1),
    shapes: z.boolean(),
    shapesGate: z.boolean(),
    // Present only when set, so a payload without them keeps the id it had before they travelled.
    /** Module constants of the problem replaced (`--set`, `--fit`); recorded as `problem_overrides`. */
    overrides: z.record(z.string().regex(/^[A-Za-z_]\w*$/), z.union([z.number().finite(), z.boolean()])).optional(),
    /** `--cross-check`: the candidate timed a second way. */
    crossCheck: z.literal(true).optional(),
    /** `--timing-budget`, ms. */
    timingBudgetMs: z.number().positive().finite().optional(),
    /** `--warmup-ms`: the warm-up by time, ms. */
    warmupMs: z.number().nonnegative().finite().optional(),
  })
  .strict();
export type EvaluationJobOptions = z.infer<typeof evaluationJobOptionsSchema>;

/** A file name without folders (the worker writes the source under it in its scratch folder). */
const fileNameSchema = z
  .string()
  .min(1)
  .max(255)
  .refine((name) => !/[/\\\0]/.test(name) && name !== '.' && name !== '..', { message: 'expected a file name without folders' });

const sourceFileSchema = z.object({ name: fileNameSchema, source: z.string().max(MAX_SOURCE_LENGTH) }).strict();
export type SourceFile = z.infer<typeof sourceFileSchema>;

/** A problem folder's declaration (shapes.py or problem.yaml) as it travels beside its reference.py. */
const declarationFileSchema = z.object({ name: z.enum(DECLARATION_FILES), source: z.string().max(MAX_SOURCE_LENGTH) }).strict();
export type DeclarationSource = z.infer<typeof declarationFileSchema>;

/**
 * One evaluation job as it crosses machines: the problem and candidate SOURCES (a remote worker
 * cannot read the coordinator's files), their names, and the evaluation options. `maxAttempts`
 * is delivery policy, not part of the evaluation, so it is left out of {@link evaluationJobId}.
 */
export const evaluationJobPayloadSchema = z
  .object({
    v: z.literal(JOB_PAYLOAD_VERSION),
    problem: sourceFileSchema,
    /**
     * A problem folder's shapes.py and problem.yaml (docs/problems.md), which the worker writes
     * beside the problem so that it judges by the folder's tolerance and forbidden names as a
     * local evaluation does; present only for a folder's `reference.py` that has them, so a
     * payload without them keeps the id it had before they travelled.
     */
    declarations: z
      .array(declarationFileSchema)
      .min(1)
      .refine((files) => new Set(files.map((file) => file.name)).size === files.length, { message: 'expected each declaration file once' })
      .optional(),
    candidate: sourceFileSchema,
    options: evaluationJobOptionsSchema,
    maxAttempts: z.number().int().min(1).max(MAX_ATTEMPTS_LIMIT),
  })
  .strict()
  .refine((payload) => payload.declarations === undefined || payload.problem.name === REFERENCE_FILE, {
    message: `expected declarations only beside a problem folder's ${REFERENCE_FILE}`,
    path: ['declarations'],
  });
export type EvaluationJobPayload = z.infer<typeof evaluationJobPayloadSchema>;

/** The job options of a request, every default filled in (as {@link resolveEvaluationSettings} fills them). */
export function normaliseJobOptions(request: Omit<EvaluationRequest, 'problemPath' | 'candidatePath'>): EvaluationJobOptions {
  // A limit given at its default is the default, except where a given limit stops the sizing.
  const defined = Object.fromEntries(
    Object.entries(request.timeoutsSeconds ?? {}).filter(
      ([stage, value]) =>
        value !== undefined &&
        ((SIZED_STAGES as readonly string[]).includes(stage) || value !== DEFAULT_STAGE_TIMEOUTS_SECONDS[stage as keyof StageTimeoutsSeconds]),
    ),
  );
  return {
    backend: request.backend,
    precision: request.precision,
    tolerance: request.tolerance,
    preset: request.preset ?? backendModule(request.backend).detect.kind,
    trials: request.trials ?? EVALUATION_DEFAULTS.trials,
    perfTrials: request.perfTrials ?? EVALUATION_DEFAULTS.perfTrials,
    warmupTrials: request.warmupTrials ?? EVALUATION_DEFAULTS.warmupTrials,
    refreshBaselines: request.refreshBaselines === true,
    skipTiming: request.skipTiming === true,
    timeoutsSeconds: defined,
    guardPolicy: effectiveGuardPolicy(request.guardPolicy),
    shapes: request.shapes === true || request.shapesGate === true,
    shapesGate: request.shapesGate === true,
    ...(request.overrides && Object.keys(request.overrides).length > 0 ? { overrides: { ...request.overrides } } : {}),
    ...(request.crossCheck === true ? { crossCheck: true as const } : {}),
    ...(request.timingBudgetMs !== undefined ? { timingBudgetMs: request.timingBudgetMs } : {}),
    ...(request.warmupMs !== undefined ? { warmupMs: request.warmupMs } : {}),
  };
}

export interface JobPayloadParts {
  problem: SourceFile;
  /** A problem folder's shapes.py and problem.yaml, for a folder's reference.py. */
  declarations?: DeclarationSource[];
  candidate: SourceFile;
  /** The request's options (paths and `deviceIndex` are ignored). */
  options: Omit<EvaluationRequest, 'problemPath' | 'candidatePath'>;
  maxAttempts?: number;
}

/** A validated payload from sources and request options. Throws a ZodError for a bad name or option. */
export function createJobPayload(parts: JobPayloadParts): EvaluationJobPayload {
  return evaluationJobPayloadSchema.parse({
    v: JOB_PAYLOAD_VERSION,
    problem: parts.problem,
    ...(parts.declarations && parts.declarations.length > 0 ? { declarations: parts.declarations } : {}),
    candidate: parts.candidate,
    options: normaliseJobOptions(parts.options),
    maxAttempts: parts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
  });
}

/**
 * The payload of a request whose files are on this machine, or the `invalid_input` result when
 * one of them cannot be read (what a local evaluator would return).
 */
export async function readJobPayload(
  request: EvaluationRequest,
  maxAttempts?: number,
): Promise<{ payload: EvaluationJobPayload } | { result: EvaluationResult }> {
  const unreadable = await unreadableInput(resolveEvaluationSettings(request));
  if (unreadable) return { result: unreadable };
  const [problem, candidate, declarations] = await Promise.all([
    readFile(request.problemPath, 'utf8'),
    readFile(request.candidatePath, 'utf8'),
    readDeclarations(request.problemPath),
  ]);
  const { problemPath: _problem, candidatePath: _candidate, ...options } = request;
  return {
    payload: createJobPayload({
      problem: { name: path.basename(request.problemPath), source: problem },
      declarations,
      candidate: { name: path.basename(request.candidatePath), source: candidate },
      options,
      maxAttempts,
    }),
  };
}

/** The declarations beside a problem folder's reference.py, read (shapes.py, problem.yaml). */
async function readDeclarations(problemPath: string): Promise<DeclarationSource[]> {
  const files = await declarationsBeside(problemPath);
  return Promise.all(files.map(async (file) => ({ name: path.basename(file) as DeclarationFile, source: await readFile(file, 'utf8') })));
}

/**
 * The job's id: `sha256-` and the hex sha256 of the problem source, a problem folder's
 * declarations (by name; only when there are any, so other jobs keep their ids), the candidate
 * source and the normalised options (other names and `maxAttempts` left out). Equal evaluations
 * get equal ids, so the queue holds one job and one result for them.
 *
 * @example evaluationJobId(payload) // 'sha256-3f2a…' (71 characters)
 */
export function evaluationJobId(payload: Pick<EvaluationJobPayload, 'v' | 'problem' | 'declarations' | 'candidate' | 'options'>): string {
  const declarations = payload.declarations ? { declarations: Object.fromEntries(payload.declarations.map((file) => [file.name, file.source])) } : {};
  const material = canonicalJson({
    v: payload.v,
    problem: payload.problem.source,
    ...declarations,
    candidate: payload.candidate.source,
    options: payload.options,
  });
  return `sha256-${createHash('sha256').update(material, 'utf8').digest('hex')}`;
}

/** The request a worker evaluates: the payload's options with the paths it wrote the sources to. */
export function requestOfPayload(payload: EvaluationJobPayload, paths: { problemPath: string; candidatePath: string }): EvaluationRequest {
  return { ...paths, ...payload.options };
}
