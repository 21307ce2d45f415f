import { randomInt } from 'node:crypto';

/** Largest seed the worker accepts (2³² − 1). */
export const MAX_SEED = 2 ** 32 - 1;

/** Returns an integer in [0, upperExclusive); `crypto.randomInt` by default. */
export type RandomInteger = (upperExclusive: number) => number;

export interface SeedPlanOptions {
  /** Correctness trials, one fresh seed each. */
  trials: number;
  /** Input sets the timed calls rotate through. 0 when nothing is timed. */
  timingSeeds: number;
  /** Timed calls; the sampled call indices lie in [0, perfTrials). */
  perfTrials: number;
  /** Timed calls whose outputs are saved and judged. */
  sampleCalls: number;
}

/** The seeds of one evaluation: all distinct, drawn fresh so a candidate cannot know them. */
export interface SeedPlan {
  correctness: number[];
  timing: number[];
  /** Indices of timed calls whose outputs are judged, ascending. */
  sampleCalls: number[];
  /** Seeds of the generalisation trials at other problem sizes (used with `--shapes`). */
  generalisation: number[];
}

/** Generalisation trials drawn per evaluation (one per size variant the worker derives). */
const GENERALISATION_SEEDS = 2;

/**
 * Draws fresh seeds for one evaluation (docs/hacks.md #13: hidden seeds): correctness and timing seeds
 * never repeat, and the sampled timed calls are distinct random indices.
 *
 * @example drawSeedPlan({ trials: 5, timingSeeds: 3, perfTrials: 100, sampleCalls: 3 })
 */
export function drawSeedPlan(options: SeedPlanOptions, random: RandomInteger = randomInt): SeedPlan {
  const seeds = distinct(options.trials + options.timingSeeds, MAX_SEED + 1, random);
  const samples = distinct(Math.min(options.sampleCalls, options.perfTrials), options.perfTrials, random);
  const taken = new Set(seeds);
  const generalisation: number[] = [];
  while (generalisation.length < GENERALISATION_SEEDS) {
    const seed = random(MAX_SEED + 1);
    if (!taken.has(seed)) {
      taken.add(seed);
      generalisation.push(seed);
    }
  }
  return {
    correctness: seeds.slice(0, options.trials),
    timing: seeds.slice(options.trials),
    sampleCalls: samples.sort((a, b) => a - b),
    generalisation,
  };
}

function distinct(count: number, upperExclusive: number, random: RandomInteger): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(random(upperExclusive));
  return [...chosen];
}
