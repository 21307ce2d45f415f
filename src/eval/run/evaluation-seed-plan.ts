import { EVALUATION_DEFAULTS, type EvaluationSettings } from './evaluation-settings.js';
import { drawSeedPlan, type RandomInteger, type SeedPlan } from './seeds.js';

/** The fresh seeds of one evaluation with these settings (the same rule for every evaluator). */
export function drawEvaluationSeeds(settings: EvaluationSettings, randomInteger?: RandomInteger): SeedPlan {
  return drawSeedPlan(
    {
      trials: settings.trials,
      timingSeeds: settings.timing ? EVALUATION_DEFAULTS.timingSeeds : 0,
      perfTrials: settings.timing ? settings.perfTrials : 0,
      sampleCalls: EVALUATION_DEFAULTS.sampleCalls,
    },
    randomInteger,
  );
}
