import type { Logger } from 'pino';
import type { Backend } from '../../core/verdict.js';
import { openEvaluator, type OpenedEvaluator } from '../evaluator/open-evaluator.js';
import { pipelineDevicesFor } from '../evaluator/pipeline-devices.js';
import { problemFolderReaderFor } from '../evaluator/problem-folders.js';
import type { CliIo } from '../io/cli-io.js';
import type { Evaluator } from '../../eval/evaluator.js';
import type { RemoteEvaluation, RemoteEvaluationOptions } from '../evaluator/remote-evaluation.js';
import type { OptimizeFlags } from './optimize-flags.js';

/**
 * The local pipeline's sizing: one warm worker of each role is ready for the next candidate while
 * the model writes it; candidates submitted together start more workers as they need them.
 */
const WARM_ONE_OF_EACH = { warmCandidatesPerDevice: 1, warmReferencesPerDevice: 1 } as const;

/** What {@link openRunEvaluator} opens an evaluator from. */
export interface RunEvaluatorRequest {
  io: CliIo;
  flags: OptimizeFlags;
  backend: Backend;
  deviceIndex: number | undefined;
  logger: Logger;
  /** What tests replace (as `OptimizeCommandDependencies` documents them). */
  dependencies: {
    createEvaluator?: ((wiring: { logger: Logger; backend: Backend }) => Evaluator | Promise<Evaluator>) | undefined;
    openRemoteEvaluation?: ((options: RemoteEvaluationOptions) => Promise<RemoteEvaluation>) | undefined;
  };
}

/** The run's evaluator: the queue's with `--redis`, else a local pipeline for the run's one device. */
export async function openRunEvaluator({ io, flags, backend, deviceIndex, logger, dependencies }: RunEvaluatorRequest): Promise<OpenedEvaluator> {
  const { createEvaluator, openRemoteEvaluation } = dependencies;
  return openEvaluator(
    flags.redis
      ? {
          kind: 'redis',
          options: { url: flags.redis, queueName: flags.queue, slots: flags.remoteSlots, backend, logger, stderr: io.stderr },
          ...(openRemoteEvaluation ? { open: openRemoteEvaluation } : {}),
          // Problem folders' shapes are swept here, each shape one job (docs/problems.md).
          problemFolders: problemFolderReaderFor(io),
        }
      : {
          kind: 'local',
          wiring: { environment: io.environment, cwd: io.cwd, logger, ...(flags.cacheDir ? { cacheDirectory: flags.cacheDir } : {}) },
          // The run's requests name one device (`--device`); the pipeline's only device is that one.
          pipeline: { sizing: WARM_ONE_OF_EACH, ...pipelineDevicesFor(backend, deviceIndex) },
          ...(createEvaluator ? { create: () => createEvaluator({ logger, backend }) } : {}),
        },
  );
}
