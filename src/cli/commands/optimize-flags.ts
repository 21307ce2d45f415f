import path from 'node:path';
import { z } from 'zod';
import type { OptimizeRequest } from '../../agent/run/optimize-plan-builder.js';
import { STALL_POLICIES } from '../../agent/search/state/stall-policies.js';
import { STRATEGY_NAMES } from '../../agent/search/state/strategy-names.js';
import { BACKENDS, PRECISIONS, PRESETS, TOLERANCE_PROFILES } from '../../core/verdict.js';
import { QUEUE_NAME_PATTERN } from '../../queue/redis/redis-keys.js';
import { PROVIDER_NAMES } from '../../core/config.js';
import { choiceFlag, guardPolicyFlag, integerFlag, nonNegativeNumberFlag, positiveNumberFlag } from '../flags/flag-schemas.js';
import { LOG_FORMATS } from '../io/log-formats.js';
import { suiteFlagsShape } from '../flags/suite-options.js';
import { TIMEOUT_STAGES, timeoutOptionName } from '../flags/timeout-stages.js';
import { UsageError } from '../io/usage-error.js';

const positiveInteger = (flag: string) => integerFlag(flag, 1);
const nonNegativeInteger = (flag: string) => integerFlag(flag, 0);
const positiveNumber = (flag: string) => positiveNumberFlag(flag);

const flagsSchema = z.object({
  provider: choiceFlag('--provider', PROVIDER_NAMES).optional(),
  model: z.string().min(1).optional(),
  baseUrl: z.string().min(1).optional(),
  dir: z.string().min(1).optional(),
  strategy: choiceFlag('--strategy', STRATEGY_NAMES).optional(),
  maxCandidates: positiveInteger('--max-candidates').optional(),
  maxMinutes: positiveNumber('--max-minutes').optional(),
  maxTokens: positiveInteger('--max-tokens').optional(),
  maxCost: positiveNumber('--max-cost').optional(),
  maxGpuSeconds: positiveNumber('--max-gpu-seconds').optional(),
  targetSpeedup: positiveNumber('--target-speedup').optional(),
  concurrency: positiveInteger('--concurrency').optional(),
  backend: choiceFlag('--backend', BACKENDS).optional(),
  precision: choiceFlag('--precision', PRECISIONS).optional(),
  tolerance: choiceFlag('--tolerance', TOLERANCE_PROFILES).optional(),
  guardPolicy: guardPolicyFlag('--guard-policy').optional(),
  trials: positiveInteger('--trials').optional(),
  perfTrials: positiveInteger('--perf-trials').optional(),
  warmup: nonNegativeInteger('--warmup').optional(),
  warmupMs: nonNegativeNumberFlag('--warmup-ms', 'milliseconds').optional(),
  device: nonNegativeInteger('--device').optional(),
  cacheDir: z.string().min(1).optional(),
  redis: z.string().min(1).optional(),
  queue: z.string().regex(QUEUE_NAME_PATTERN, 'expected `--queue` to be letters, digits, `_`, `.` or `-` (at most 64)').optional(),
  remoteSlots: positiveInteger('--remote-slots').optional(),
  preset: choiceFlag('--preset', PRESETS).optional(),
  /** `--set NAME=VALUE`, repeatable: module constants of every problem replaced (docs/sizes.md). */
  set: z.array(z.string()).default([]),
  /** `--fit`: each problem at sizes that fit this machine when its own do not. */
  fit: z.boolean().default(false),
  /** `--eval-budget DURATION`: each problem at sizes whose evaluation takes about that long on this machine. */
  evalBudget: z.string().optional(),
  stallAfter: positiveInteger('--stall-after').optional(),
  onStall: choiceFlag('--on-stall', STALL_POLICIES).optional(),
  switchTo: choiceFlag('--switch-to', STRATEGY_NAMES).optional(),
  store: z.string().min(1).optional(),
  out: z.string().min(1).optional(),
  resume: z.string().min(1).optional(),
  config: z.string().min(1).optional(),
  json: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  ...suiteFlagsShape,
  logFormat: choiceFlag('--log-format', LOG_FORMATS).optional(),
  ...Object.fromEntries(TIMEOUT_STAGES.map((stage) => [timeoutOptionName(stage), positiveNumber(`--timeout-${stage}`).optional()])),
});
/** The flags of `kforge optimize` as parsed; `--timeout-<stage>` values under their commander names. */
export type OptimizeFlags = z.infer<typeof flagsSchema> & Record<string, unknown>;

/** Flags that describe a new run; with `--resume` the stored settings are used instead. */
const NEW_RUN_FLAGS = [
  ...[
    'provider',
    'model',
    'baseUrl',
    'dir',
    'strategy',
    'maxCandidates',
    'maxMinutes',
    'maxTokens',
    'maxCost',
    'maxGpuSeconds',
    'targetSpeedup',
    'concurrency',
  ],
  ...['backend', 'precision', 'tolerance', 'guardPolicy', 'trials', 'perfTrials', 'warmup', 'warmupMs', 'device', 'preset', 'set', 'fit', 'evalBudget'],
  ...['stallAfter', 'onStall', 'switchTo', 'out'],
  ...['filter', 'limit', 'problems', 'dryRun'],
  ...TIMEOUT_STAGES.map(timeoutOptionName),
];

/**
 * Validates the raw flags of `kforge optimize` (as commander collected them) against its problem
 * arguments; throws a {@link UsageError} naming the first bad flag, a new run's flag given with
 * `--resume`, or a run without problems.
 */
export function parseOptimizeFlags(raw: unknown, problems: readonly string[]): OptimizeFlags {
  const parsed = flagsSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  const flags: OptimizeFlags = parsed.data;
  if (flags.resume) {
    const given = (value: unknown): boolean => value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0);
    const extra = NEW_RUN_FLAGS.filter((name) => given(flags[name]));
    if (problems.length > 0 || extra.length > 0) {
      throw new UsageError(
        `--resume continues run \`${flags.resume}\` with its stored settings: drop ${problems.length > 0 ? 'the problem arguments' : `--${extra[0]!.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`}`,
      );
    }
  } else if (problems.length === 0 && !flags.problems) {
    throw new UsageError('expected a problem file or folder (or --problems FILE): kforge optimize PROBLEM.py --provider NAME --model ID');
  }
  return flags;
}

/** The request a new run's flags make; `storePath` absolute, the candidates kept beside it. */
export function requestFromFlags(flags: OptimizeFlags, problems: string[], cwd: string, storePath: string): OptimizeRequest {
  const { provider, model, baseUrl, dir, strategy, maxCandidates, maxMinutes, maxTokens, maxGpuSeconds, targetSpeedup, concurrency } = flags;
  const { backend, precision, tolerance, guardPolicy, trials, perfTrials, preset, stallAfter, onStall, switchTo } = flags;
  return {
    ...{
      provider,
      model,
      baseUrl,
      dir: dir === undefined ? undefined : path.resolve(cwd, dir),
      strategy,
      maxCandidates,
      maxMinutes,
      maxTokens,
      maxGpuSeconds,
      targetSpeedup,
      concurrency,
    },
    ...{ backend, precision, tolerance, guardPolicy, trials, perfTrials, preset, stallAfter, onStall, switchTo },
    ...(flags.maxCost === undefined ? {} : { maxCostUsd: flags.maxCost }),
    ...(flags.warmup === undefined ? {} : { warmupTrials: flags.warmup }),
    ...(flags.warmupMs === undefined ? {} : { warmupMs: flags.warmupMs }),
    ...(flags.device === undefined ? {} : { deviceIndex: flags.device }),
    timeoutsSeconds: Object.fromEntries(
      TIMEOUT_STAGES.flatMap((stage) => (typeof flags[timeoutOptionName(stage)] === 'number' ? [[stage, flags[timeoutOptionName(stage)] as number]] : [])),
    ),
    problems,
    outDir: path.resolve(cwd, flags.out ?? 'kforge-out'),
    candidatesDir: path.join(path.dirname(storePath), 'candidates'),
  };
}
