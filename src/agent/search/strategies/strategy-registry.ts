import type { StrategyName } from '../state/attempt.js';
import { IdeasStrategy, type IdeasStrategyOptions } from './ideas-strategy.js';
import { RefineStrategy, type RefineStrategyOptions } from './refine-strategy.js';
import { SampleStrategy, type SampleStrategyOptions } from './sample-strategy.js';
import type { SearchStrategy } from './search-strategy.js';

/** Options of every strategy, each under its name. */
export interface StrategyOptionsByName {
  refine?: RefineStrategyOptions;
  sample?: SampleStrategyOptions;
  ideas?: IdeasStrategyOptions;
}

/** The strategy `--strategy NAME` selects. */
export function createStrategy(name: StrategyName, options: StrategyOptionsByName = {}): SearchStrategy {
  switch (name) {
    case 'refine':
      return new RefineStrategy(options.refine);
    case 'sample':
      return new SampleStrategy(options.sample);
    case 'ideas':
      return new IdeasStrategy(options.ideas);
  }
}

/**
 * Where a stalled problem goes under the `switch-strategy` policy when none is configured: from
 * local refinement to new ideas, and from the others to refinement of what they found.
 */
export function defaultSwitchTarget(from: StrategyName): StrategyName {
  return from === 'refine' ? 'ideas' : 'refine';
}
