import type { OptimizePlan } from '../../agent/run/optimize-plan.js';
import type { SearchEventListener } from '../../agent/search/state/search-events.js';
import type { ModelSettings } from '../../core/config.js';
import { problemStem } from '../../eval/problem/problem-folder.js';
import type { KernelModel } from '../../llm/kernel-model.js';
import { ModelConfigurationError } from '../../llm/model-configuration-error.js';
import { PerProblemFilesKernelModel, type ReplayedProblem } from '../../llm/providers/per-problem-files-kernel-model.js';
import { createKernelModel } from '../../llm/providers/providers.js';
import type { RunStore } from '../../store/run-store.js';

export interface RunModelWiring {
  plan: OptimizePlan;
  /** The plan's model settings with the API key added where the config has one. */
  settings: ModelSettings;
  store: RunStore;
  /** The run being resumed: its stored model calls say how many replies each problem already took. */
  resumeRunId?: string;
  /** Replaces the model entirely (tests). Default: see {@link createRunModel}. */
  createModel?: (settings: ModelSettings) => Promise<KernelModel>;
}

/** The run's problems by stem (a problem folder's name for its reference.py), each with the replies its search took (model calls that replied). */
async function replayedProblems(wiring: RunModelWiring): Promise<ReplayedProblem[]> {
  const { plan, store, resumeRunId } = wiring;
  if (!resumeRunId) return Promise.all(plan.problems.map(async (file) => ({ name: await problemStem(file) })));
  const [records, calls] = await Promise.all([store.listRunProblems(resumeRunId), store.listModelCalls(resumeRunId)]);
  const served = new Map<string, number>();
  for (const call of calls) {
    if (call.problemHash === null || call.error !== null || call.replyText === null) continue;
    served.set(call.problemHash, (served.get(call.problemHash) ?? 0) + 1);
  }
  return Promise.all(
    records.map(async (record) => {
      const given = plan.problemPaths[record.hash];
      return { name: given ? await problemStem(given) : record.name, repliesServed: served.get(record.hash) ?? 0 };
    }),
  );
}

/**
 * The model an optimize run calls. `createModel` when given; else, for the `files` provider, a
 * {@link PerProblemFilesKernelModel} over `--dir` (one subfolder per problem where present) that a
 * resumed run continues past the replies already taken; else `createKernelModel`. Pass the run's
 * progress listener through {@link routeProblemEvents} so the files model follows the problem
 * being searched.
 *
 * @throws ModelConfigurationError naming the setting to fix.
 */
export async function createRunModel(wiring: RunModelWiring): Promise<KernelModel> {
  const { settings } = wiring;
  if (wiring.createModel) return wiring.createModel(settings);
  if (settings.provider !== 'files') return createKernelModel(settings);
  if (!settings.dir) {
    throw new ModelConfigurationError('The files provider needs a folder: pass --dir DIR (or "dir" in the config).', { provider: 'files', setting: '--dir' });
  }
  return PerProblemFilesKernelModel.fromDirectory(settings.dir, {
    problems: await replayedProblems(wiring),
    ...(settings.model ? { modelId: settings.model } : {}),
  });
}

/**
 * A listener that, before passing each event on, points a {@link PerProblemFilesKernelModel} at
 * the problem a `problem-started` event names (the run searches its problems one at a time and
 * announces each before its first model call). Other models: the listener itself.
 */
export function routeProblemEvents(model: KernelModel, listener: SearchEventListener): SearchEventListener {
  if (!(model instanceof PerProblemFilesKernelModel)) return listener;
  return (event) => {
    if (event.type === 'problem-started') model.select(event.problem);
    listener(event);
  };
}
