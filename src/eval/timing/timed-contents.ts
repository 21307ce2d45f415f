/**
 * Which input contents each timed call and each trusted-batch call of the candidate uses, as the
 * worker deals them (docs/worker-protocol.md, stage `timing`; worker/kforge_worker/timing/timing_inputs.py
 * and candidate_batches.py). The parent reproduces the plan to check that every output handed over
 * belongs to the call it was asked for (docs/timing.md, P2).
 */

/** Input bytes the content sets of all timed models may take together (the worker's budget). */
export const CONTENT_POOL_BYTES = 1024 ** 3;
/** Fewest content sets per model when the pool is too small for one per call. */
export const MIN_CONTENTS = 2;

/**
 * `derived_seed(seed, index)` of worker/kforge_worker/problem/seeds.py, in 32-bit unsigned arithmetic.
 *
 * @example derivedSeed(21, 1) // 3350528861
 */
export function derivedSeed(seed: number, index: number): number {
  let value = (Math.imul(seed >>> 0, 0x9e3779b1) + Math.imul(index >>> 0, 0x85ebca77)) >>> 0;
  value = (value ^ (value >>> 16)) >>> 0;
  value = Math.imul(value, 0x7feb352d) >>> 0;
  return (value ^ (value >>> 15)) >>> 0;
}

/** How many of `calls` calls, dealt round-robin over `models` models, go to model `modelIndex`. */
export function callsOfModel(modelIndex: number, models: number, calls: number): number {
  return Math.max(0, Math.floor((calls - modelIndex + models - 1) / models));
}

/**
 * K, the content sets per timed model: one per call of the busiest model (warm-up and timed),
 * unless that exceeds {@link CONTENT_POOL_BYTES}; then what fits, at least {@link MIN_CONTENTS}.
 */
export function contentCount(models: number, warmupTrials: number, perfTrials: number, bytesPerSet: number): number {
  const needed = Math.max(1, callsOfModel(0, models, warmupTrials) + callsOfModel(0, models, perfTrials));
  const affordable = Math.floor(CONTENT_POOL_BYTES / Math.max(1, models * bytesPerSet));
  return Math.max(1, Math.min(needed, Math.max(MIN_CONTENTS, affordable)));
}

/** The model seed and input seed one call's output must be judged against. */
export interface ExpectedContents {
  seed: number;
  inputSeed: number;
}

function contentsOf(seed: number, content: number): ExpectedContents {
  return { seed, inputSeed: content === 0 ? seed : derivedSeed(seed, content) };
}

/** Timed call `index`'s contents (after `warmupTrials` requested warm-up calls, K = `contents`). */
export function timedCallContents(timingSeeds: readonly number[], warmupTrials: number, contents: number, index: number): ExpectedContents {
  const models = timingSeeds.length;
  const modelIndex = index % models;
  const rank = Math.floor(index / models) + callsOfModel(modelIndex, models, warmupTrials);
  return contentsOf(timingSeeds[modelIndex]!, rank % contents);
}

/**
 * Batch calls' contents: batch call j of a batch goes to model j mod T with content index
 * K + (that model's calls in earlier batches) + floor(j / T), never a content of the per-call loop.
 */
export class BatchContents {
  readonly #seeds: readonly number[];
  readonly #contents: number;
  readonly #used: number[];

  constructor(timingSeeds: readonly number[], contents: number) {
    this.#seeds = timingSeeds;
    this.#contents = contents;
    this.#used = timingSeeds.map(() => 0);
  }

  /** The contents of call `call` of the batch now running. */
  of(call: number): ExpectedContents {
    const models = this.#seeds.length;
    const modelIndex = call % models;
    return contentsOf(this.#seeds[modelIndex]!, this.#contents + this.#used[modelIndex]! + Math.floor(call / models));
  }

  /** Records a finished batch of `calls` calls. */
  finish(calls: number): void {
    for (let model = 0; model < this.#seeds.length; model += 1) this.#used[model]! += callsOfModel(model, this.#seeds.length, calls);
  }
}
