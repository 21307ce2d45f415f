import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { backendSchema, precisionSchema, presetSchema } from '../../core/verdict.js';
import { baselineEntrySchema } from '../process/protocol.js';

/** Everything a baseline's times depend on; its SHA-256 is the cache key. */
export const baselineKeyMaterialSchema = z.object({
  /** SHA-256 of the problem file's bytes. */
  problem_sha256: z.string(),
  preset: presetSchema,
  precision: precisionSchema,
  backend: backendSchema,
  device: z.string(),
  torch: z.string(),
  cuda: z.string().nullable(),
  driver: z.string().nullable(),
  perf_trials: z.number().int().positive(),
  /** The warm-up by time, ms; absent when there was none (so entries from before it keep their keys). */
  warmup_ms: z.number().positive().optional(),
});
export type BaselineKeyMaterial = z.infer<typeof baselineKeyMaterialSchema>;

/** A cached pair of baselines: raw call times of eager and torch.compile, or why one is missing. */
export const cachedBaselinesSchema = z.object({
  key: z.string(),
  key_material: baselineKeyMaterialSchema,
  /** ISO 8601 time of the measurement. */
  measured_at: z.string(),
  eager: baselineEntrySchema.nullable(),
  compile: baselineEntrySchema.nullable(),
});
export type CachedBaselines = z.infer<typeof cachedBaselinesSchema>;

/** Where measured baselines are kept between evaluations. */
export interface BaselineCache {
  /** The entry stored under `key`, or null when there is none (or it is unreadable). */
  get(key: string): Promise<CachedBaselines | null>;
  /** Stores an entry under its own `key`, replacing any earlier one. */
  put(entry: CachedBaselines): Promise<void>;
  /**
   * The entry under `key` if one is known now, without taking part in who measures it (a shared
   * cache's `get` makes the first caller that misses the one that measures, and the others wait).
   */
  peek?(key: string): Promise<CachedBaselines | null>;
}

/** SHA-256 over the key material, in a fixed field order. */
export function baselineCacheKey(material: BaselineKeyMaterial): string {
  const parsed = baselineKeyMaterialSchema.parse(material);
  const ordered = Object.keys(parsed)
    .sort()
    .map((name) => [name, parsed[name as keyof BaselineKeyMaterial]]);
  return createHash('sha256').update(JSON.stringify(ordered)).digest('hex');
}

/**
 * The default cache folder: `$KFORGE_CACHE_DIR/baselines` when that is set, else
 * `.kforge/baselines` under `workingDirectory`.
 */
export function defaultBaselineCacheDirectory(environment: NodeJS.ProcessEnv = process.env, workingDirectory: string = process.cwd()): string {
  const root = environment.KFORGE_CACHE_DIR ? path.resolve(environment.KFORGE_CACHE_DIR) : path.join(workingDirectory, '.kforge');
  return path.join(root, 'baselines');
}
