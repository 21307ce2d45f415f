import type { Backend } from '../../core/verdict.js';
import type { Evaluator } from '../../eval/evaluator.js';
import type { ProblemFolderReader } from '../../eval/problem/problem-folder-reader.js';
import { ShapeSweepEvaluator } from '../../eval/problem/shape-sweep-evaluator.js';
import { JobQueueEvaluator } from '../../queue/job-queue-evaluator.js';
import type { JobQueue } from '../../queue/job-queue.js';
import type { PipelinedEvaluatorOptions } from '../../eval/pipeline/pipelined-evaluator-options.js';
import { createLocalPipelinedEvaluator, type LocalPipelineWiring } from './create-worker-evaluator.js';
import type { OpenedEvaluator } from './opened-evaluator.js';
import { problemFolderReaderFor } from './problem-folders.js';
import { openRemoteEvaluation, type RemoteEvaluationOptions } from './remote-evaluation.js';

export type { OpenedEvaluator } from './opened-evaluator.js';

/**
 * How problem folders (docs/problems.md) are evaluated: a reader, their shapes swept here (each
 * shape one evaluation of the place's evaluator); `false` for none (`kforge worker`, whose jobs are
 * single shapes already). Default: for `local`, the worker's `describe` under the wiring's
 * environment; for `redis` and `queue`, none.
 */
type ProblemFolders = { problemFolders?: ProblemFolderReader | false };

/** Where a command's evaluations run. */
export type EvaluatorPlace =
  /** On this host: a PipelinedEvaluator (`createLocalPipelinedEvaluator`), or what `create` makes (tests). */
  (
    | {
        kind: 'local';
        wiring: LocalPipelineWiring;
        pipeline?: Pick<PipelinedEvaluatorOptions, 'sizing' | 'cudaDevices'>;
        create?: () => Evaluator | Promise<Evaluator>;
      }
    /** On the workers of a Redis queue the factory connects to (`kforge optimize --redis`), `slots` jobs at once. */
    | { kind: 'redis'; options: RemoteEvaluationOptions; open?: (options: RemoteEvaluationOptions) => Promise<OpenedEvaluator> }
    /** Through a job queue the command opened (`kforge serve --redis`); closing the evaluator closes the queue. */
    | { kind: 'queue'; queue: JobQueue }
  ) &
    ProblemFolders;

/**
 * Opens the one evaluator a command needs: local (a pipelined Python evaluator over the host's
 * devices) or remote (a JobQueueEvaluator over a job queue), always as an {@link Evaluator} with
 * its usage per evaluation, and a `close` for the end of the command.
 *
 * @example
 * const { evaluator, close } = await openEvaluator({ kind: 'local', wiring: { environment, cwd, logger } });
 * try { await evaluator.evaluate(request); } finally { await close(); }
 */
export async function openEvaluator(place: EvaluatorPlace): Promise<OpenedEvaluator> {
  const opened = await openPlace(place);
  const readFolder = place.problemFolders ?? (place.kind === 'local' ? problemFolderReaderFor(place.wiring) : false);
  if (readFolder === false) return opened;
  // The sweep wraps the evaluator only: the warm-up and close of the one underneath stay the command's.
  return { ...opened, evaluator: new ShapeSweepEvaluator({ inner: opened.evaluator, readFolder }) };
}

async function openPlace(place: EvaluatorPlace): Promise<OpenedEvaluator> {
  switch (place.kind) {
    case 'local': {
      const evaluator: Evaluator & { warmUp?: (backend: Backend) => Promise<unknown> } = place.create
        ? await place.create()
        : createLocalPipelinedEvaluator(place.wiring, place.pipeline);
      const { logger } = place.wiring;
      const warmUp = (backend: Backend): void =>
        void evaluator.warmUp?.(backend).catch((error: unknown) => logger.debug({ err: error }, 'the warm-up failed; the first evaluation starts its workers'));
      return { evaluator, close: async () => evaluator.close?.(), warmUp };
    }
    case 'redis':
      return (place.open ?? openRemoteEvaluation)(place.options);
    case 'queue': {
      const { queue } = place;
      return { evaluator: new JobQueueEvaluator(queue), close: (options) => queue.close(options) };
    }
  }
}
