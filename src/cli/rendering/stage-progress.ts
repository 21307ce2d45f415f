import type picocolors from 'picocolors';
import type { EvaluationProgress } from '../../eval/evaluator.js';
import type { TextSink } from '../io/cli-io.js';
import { formatDuration } from './format.js';

type Colors = ReturnType<typeof picocolors.createColors>;

/** What each stage does, as progress lines name it. */
const STAGE_LABELS: Record<string, string> = {
  reference: 'computing the reference outputs',
  baseline: 'timing the eager and torch.compile baselines',
  judge: 'judging the outputs',
  build: 'building the candidate',
  load: 'loading the candidate',
  correctness: 'running the correctness trials',
  timing: 'timing the candidate',
};

/** Writes one line per stage start and end to stderr: `kforge: building the candidate: done in 45.2 s`. */
export function stageProgressWriter(stderr: TextSink, colors: Colors): (event: EvaluationProgress) => void {
  return (event) => {
    const label = STAGE_LABELS[event.stage] ?? `${event.role} ${event.stage}`;
    if (event.kind === 'stage-started') stderr.write(colors.dim(`kforge: ${label} …\n`));
    else stderr.write(colors.dim(`kforge: ${label}: done in ${formatDuration(event.durationMs)}\n`));
  };
}
