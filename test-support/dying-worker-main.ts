/**
 * `kforge worker` as tests run it, with one difference: a job whose candidate file name contains
 * `KFORGE_TEST_DIE_ON_CANDIDATE` kills this whole process (SIGKILL) as its evaluation starts, the
 * way a candidate that takes its worker down would. Kept out of the shipped CLI on purpose.
 *
 *   node --import tsx test-support/dying-worker-main.ts worker --redis URL ...
 */
import path from 'node:path';
import { registerWorkerCommand } from '../src/cli/commands/worker.js';
import { createLocalPipelinedEvaluator, workerPipelineOptions } from '../src/cli/evaluator/create-worker-evaluator.js';
import { runProgram } from '../src/cli/run-program.js';
import type { Evaluator } from '../src/eval/evaluator.js';

export const DIE_ON_CANDIDATE_VARIABLE = 'KFORGE_TEST_DIE_ON_CANDIDATE';

const mark = process.env[DIE_ON_CANDIDATE_VARIABLE] ?? '';
const status = await runProgram(process.argv.slice(2), [
  (program, io) =>
    registerWorkerCommand(program, {
      ...io,
      createEvaluator: (wiring) => {
        const inner = createLocalPipelinedEvaluator(wiring, workerPipelineOptions(wiring));
        const evaluator: Evaluator & Pick<typeof inner, 'warmUp'> = {
          evaluate: (request, options) => {
            if (mark && path.basename(request.candidatePath).includes(mark)) {
              process.stderr.write(`kforge worker: ${DIE_ON_CANDIDATE_VARIABLE}: ${path.basename(request.candidatePath)} matches; killing this worker\n`);
              process.kill(process.pid, 'SIGKILL');
            }
            return inner.evaluate(request, options);
          },
          close: () => inner.close(),
          warmUp: (backend) => inner.warmUp(backend),
        };
        return evaluator;
      },
    }),
]);
if (status !== undefined) process.exitCode = status;
