import { optimizePlanSchema, type OptimizePlan } from '../../agent/run/optimize-plan.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import type { Run } from '../../store/run-store.js';

/** The run's stored optimize plan, or null when the run was made by something else (or an older version). */
export function readRunPlan(run: Pick<Run, 'config'>): OptimizePlan | null {
  const parsed = optimizePlanSchema.safeParse(run.config);
  return parsed.success ? parsed.data : null;
}

/** The evaluation settings a run's candidates are judged under, as an `EvaluationRequest` without paths. */
export function evaluationSettingsOf(plan: OptimizePlan): Omit<EvaluationRequest, 'problemPath' | 'candidatePath'> {
  const { backend, precision, tolerance, preset, trials, perfTrials, warmupTrials, warmupMs, deviceIndex, timeoutsSeconds } = plan.evaluation;
  return {
    backend,
    precision,
    tolerance,
    ...(preset === undefined ? {} : { preset }),
    ...(trials === undefined ? {} : { trials }),
    ...(perfTrials === undefined ? {} : { perfTrials }),
    ...(warmupTrials === undefined ? {} : { warmupTrials }),
    ...(warmupMs === undefined ? {} : { warmupMs }),
    ...(deviceIndex === undefined ? {} : { deviceIndex }),
    ...(timeoutsSeconds === undefined ? {} : { timeoutsSeconds }),
  };
}
