import { effectiveGuardPolicy } from '../../core/guard-policy.js';
import path from 'node:path';
import type { KforgeConfig } from '../../core/config.js';
import type { Backend, Precision, Preset, ToleranceProfile } from '../../core/verdict.js';
import type { StrategyName } from '../search/state/attempt.js';
import { optimizePlanSchema, type OptimizePlan } from './optimize-plan.js';
import { OptimizeRequestError } from './optimize-request-error.js';
import type { StallPolicy } from '../search/state/stall-detector.js';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_STALL_AFTER } from './optimize-defaults.js';

export { DEFAULT_MAX_CANDIDATES, DEFAULT_STALL_AFTER } from './optimize-defaults.js';

/** What a person asked for on the command line (or a form), already checked one by one. */
export interface OptimizeRequest {
  /** Problem files, absolute, in run order (see `resolveProblemFiles`). */
  problems: string[];
  provider?: string;
  model?: string;
  baseUrl?: string;
  dir?: string;
  strategy?: StrategyName;
  maxCandidates?: number;
  maxMinutes?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  maxGpuSeconds?: number;
  targetSpeedup?: number;
  concurrency?: number;
  backend?: Backend;
  precision?: Precision;
  tolerance?: ToleranceProfile;
  /** Guard policy of every evaluation (src/core/guard-policies.ts); else the config's `guard.policy`, else `kernelbench`. */
  guardPolicy?: string;
  trials?: number;
  perfTrials?: number;
  warmupTrials?: number;
  /** Warm-up by time, ms (`--warmup-ms`). */
  warmupMs?: number;
  /** GPU index on multi-GPU hosts. */
  deviceIndex?: number;
  /** Per-stage limits of the evaluator, seconds. */
  timeoutsSeconds?: Record<string, number>;
  preset?: Preset;
  stallAfter?: number;
  onStall?: StallPolicy;
  switchTo?: StrategyName;
  /** Output folder, absolute. */
  outDir: string;
  /** Candidate files folder, absolute. */
  candidatesDir: string;
}

function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

/** The plan's limits per problem and for the whole run; with none given, {@link DEFAULT_MAX_CANDIDATES} candidates a problem. */
function planBudgets(request: OptimizeRequest, config: KforgeConfig) {
  const budgets = config.budgets ?? {};
  const maxMinutes = request.maxMinutes ?? budgets.maxMinutes;
  const perProblem = defined({
    maxCandidates: request.maxCandidates ?? budgets.maxCandidates,
    maxWallMs: maxMinutes === undefined ? undefined : maxMinutes * 60_000,
    targetSpeedup: request.targetSpeedup ?? budgets.targetSpeedup,
  });
  const total = defined({
    maxTokens: request.maxTokens ?? budgets.maxTokens,
    maxCostUsd: request.maxCostUsd ?? budgets.maxCostUsd,
    maxDeviceSeconds: request.maxGpuSeconds,
  });
  if (perProblem.maxCandidates === undefined && perProblem.maxWallMs === undefined && Object.keys(total).length === 0) {
    perProblem.maxCandidates = DEFAULT_MAX_CANDIDATES;
  }
  return { perProblem, total };
}

/** The plan's model settings: flags over the config (the API key itself is never in a plan). */
function planModel(request: OptimizeRequest, config: KforgeConfig, provider: string) {
  return defined({
    provider,
    model: request.model ?? config.model,
    baseUrl: request.baseUrl ?? config.baseUrl,
    dir: request.dir ?? config.dir,
    apiKeyEnv: config.apiKeyEnv,
    temperature: config.temperature,
    maxOutputTokens: config.maxOutputTokens,
    reasoningEffort: config.reasoningEffort,
    timeoutSeconds: config.timeoutSeconds,
    maxAttempts: config.maxAttempts,
    prices: config.prices,
  });
}

/**
 * Merges flags over `kforge.config.json` into a plan: a flag wins over the config, the config over
 * the defaults. Without any limit, a problem gets {@link DEFAULT_MAX_CANDIDATES} candidates.
 * `--max-candidates`, `--max-minutes` and `--target-speedup` are per problem; `--max-tokens`,
 * `--max-cost` and `--max-gpu-seconds` are for the whole run.
 *
 * @throws OptimizeRequestError naming the flag to pass.
 */
export function buildOptimizePlan(request: OptimizeRequest, config: KforgeConfig = {}): OptimizePlan {
  const provider = request.provider ?? config.provider;
  if (!provider)
    throw new OptimizeRequestError('no model provider: pass --provider NAME (openai, anthropic, vllm, files, …) or set "provider" in kforge.config.json');
  const { perProblem, total } = planBudgets(request, config);
  const strategy = request.strategy ?? (config.strategy?.name as StrategyName | undefined) ?? 'refine';
  const strategyOptions = config.strategy?.name === strategy ? (config.strategy.options ?? {}) : {};
  const evaluator = config.evaluator ?? {};
  const model = planModel(request, config, provider);
  const concurrency: Record<string, number> = { ...(config.concurrency ?? {}) };
  if (request.concurrency !== undefined) concurrency[provider] = request.concurrency;
  const parsed = optimizePlanSchema.safeParse({
    version: 1,
    problems: request.problems,
    strategy,
    strategies: { refine: {}, sample: {}, ideas: {}, [strategy]: strategyOptions },
    perProblem,
    total,
    evaluation: defined({
      backend: request.backend ?? evaluator.backend ?? 'cuda',
      precision: request.precision ?? evaluator.precision ?? 'fp32',
      tolerance: request.tolerance ?? evaluator.tolerance ?? 'kernelbench',
      guardPolicy: effectiveGuardPolicy(request.guardPolicy ?? config.guard?.policy),
      preset: request.preset,
      trials: request.trials ?? evaluator.trials,
      perfTrials: request.perfTrials ?? evaluator.perfTrials,
      warmupTrials: request.warmupTrials,
      warmupMs: request.warmupMs,
      deviceIndex: request.deviceIndex,
      timeoutsSeconds: request.timeoutsSeconds && Object.keys(request.timeoutsSeconds).length > 0 ? request.timeoutsSeconds : undefined,
    }),
    stall: defined({ patience: request.stallAfter ?? DEFAULT_STALL_AFTER, policy: request.onStall ?? 'continue', switchTo: request.switchTo }),
    model,
    concurrency,
    outDir: path.resolve(request.outDir),
    candidatesDir: path.resolve(request.candidatesDir),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OptimizeRequestError(`invalid settings at ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'unknown problem'}`);
  }
  return parsed.data;
}
