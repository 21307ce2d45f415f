import { runsOnHost } from '../../backends/registry.js';
import type { Logger } from 'pino';
import { baselineCacheKey, type BaselineCache, type BaselineKeyMaterial, type CachedBaselines } from '../cache/baseline-cache.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import type { MessageOfType, WorkerEnvironment } from '../process/protocol.js';

/** What one evaluation needs to look up and store its baselines. */
export interface RunBaselineContext {
  settings: EvaluationSettings;
  problemSha256: string;
  baselineCache: BaselineCache;
  logger: Logger;
  now: () => Date;
}

/** What the baselines depend on; null when nothing is timed or the worker never said hello. */
export function baselineKeyMaterialOf(settings: EvaluationSettings, problemSha256: string, environment: WorkerEnvironment | null): BaselineKeyMaterial | null {
  if (!environment || !settings.timing) return null;
  return {
    problem_sha256: problemSha256,
    preset: settings.preset,
    precision: settings.precision,
    backend: settings.backend,
    // Host timings depend on the processor, so the cpu backend keys on its model.
    device: runsOnHost(settings.backend) && typeof environment.cpu === 'string' ? `cpu: ${environment.cpu}` : environment.device,
    torch: environment.torch,
    cuda: environment.cuda,
    driver: environment.driver,
    perf_trials: settings.perfTrials,
    // Figures taken before the card's clocks settled are not the same measurement.
    ...(settings.warmupMs > 0 ? { warmup_ms: settings.warmupMs } : {}),
  };
}

/** The cached baselines of this evaluation, or null (none cached, `refreshBaselines`, nothing timed). */
export async function lookUpBaselines(context: RunBaselineContext, environment: WorkerEnvironment | null): Promise<CachedBaselines | null> {
  const material = baselineKeyMaterialOf(context.settings, context.problemSha256, environment);
  if (!material || context.settings.refreshBaselines) return null;
  const key = baselineCacheKey(material);
  const cached = await context.baselineCache.get(key);
  context.logger.debug({ key, hit: cached !== null }, 'baseline cache lookup');
  return cached;
}

/**
 * The cached baselines of this evaluation when known now, without claiming the key as the one
 * that measures it (a cache that cannot peek says null).
 */
export async function peekBaselines(context: RunBaselineContext, environment: WorkerEnvironment | null): Promise<CachedBaselines | null> {
  const material = baselineKeyMaterialOf(context.settings, context.problemSha256, environment);
  if (!material || context.settings.refreshBaselines || !context.baselineCache.peek) return null;
  return context.baselineCache.peek(baselineCacheKey(material));
}

/** Stores measured baselines; a failed write is logged, not thrown (they are measured again next time). */
export async function storeBaselines(context: RunBaselineContext, environment: WorkerEnvironment | null, measured: MessageOfType<'baseline'>): Promise<void> {
  const material = baselineKeyMaterialOf(context.settings, context.problemSha256, environment);
  if (!material) return;
  try {
    await context.baselineCache.put({
      key: baselineCacheKey(material),
      key_material: material,
      measured_at: context.now().toISOString(),
      eager: measured.eager,
      compile: measured.compile,
    });
  } catch (error) {
    context.logger.warn({ err: error }, 'could not write the baseline cache; the baselines will be measured again next time');
  }
}
