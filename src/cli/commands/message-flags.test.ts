import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import type { SizeEstimate } from '../../eval/problem/size-estimate.js';
import { machineFault } from '../../eval/run/evaluation-faults.js';
import { resolveEvaluationSettings } from '../../eval/run/evaluation-settings.js';
import { limitBasis, sizedStageLimits } from '../../eval/run/sized-stage-limits.js';
import { limitFlag } from '../../eval/run/stage-limits.js';
import { outcomeOfWorkerEnd } from '../../eval/run/worker-end-outcome.js';
import type { Stage } from '../../eval/process/protocol.js';
import { registerEvalCommand } from './eval.js';
import { registerOptimizeCommand } from './optimize.js';
import { endedWorker } from '../../../test-support/worker-process-result.js';

/**
 * Issue 43: a message once told the user to "raise --timeout", which the command they ran did not
 * have. Every flag the evaluation's messages name (a time-out's, a machine fault's, a too-large
 * refusal's) must be one that both commands that show them, `kforge eval` and `kforge optimize`,
 * take.
 */
function flagsOf(register: (program: Command) => Command): Set<string> {
  return new Set(register(new Command()).options.map((option) => option.long ?? ''));
}

const named = (text: string): string[] => [...text.matchAll(/--[a-z][a-z-]*[a-z]/g)].map((match) => match[0]);

const ESTIMATE: SizeEstimate = {
  problem: 'p.py',
  problem_overrides: null,
  constants: { batch_size: 4096 },
  input_bytes: 6 * 1024 ** 3,
  parameter_bytes: 0,
  output_bytes: 6 * 1024 ** 3,
  forward_peak_bytes: 6 * 1024 ** 3,
  forward_method: 'fake',
  reference_bytes: 30 * 1024 ** 3,
  candidate_bytes: 30 * 1024 ** 3,
  evaluation_bytes: 42 * 1024 ** 3,
  capacity_bytes: 24 * 1024 ** 3,
  fits: false,
  fit: { overrides: { batch_size: 2048 }, evaluation_bytes: 21 * 1024 ** 3 },
  time: {
    constant: 'batch_size',
    probes: [{ value: 16, probe_ms: 700 }],
    evaluation_s: 5600,
    sizes: [
      { value: 4096, evaluation_s: 5600 },
      { value: 2048, evaluation_s: 2800 },
      { value: 32, evaluation_s: 50 },
    ],
    budget_s: 60,
    fit: { overrides: { batch_size: 32 }, evaluation_s: 50 },
    error: null,
  },
};

/** A worker's end in words: the outcome's reasons, or the error it throws with its hint. */
function endMessages(ended: ReturnType<typeof endedWorker>, helloSeen: boolean): string[] {
  try {
    return outcomeOfWorkerEnd(ended, 'correctness-outputs', helloSeen).reasons.map((reason) => reason.message);
  } catch (error) {
    return [(error as Error).message, (error as { hint?: string }).hint ?? ''];
  }
}

test('every flag the evaluation names in its messages is one that kforge eval and kforge optimize take', () => {
  const messages: string[] = [];
  const settings = resolveEvaluationSettings({ problemPath: 'p.py', candidatePath: 'c.py', backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' });
  const { limits } = sizedStageLimits(settings, 2600);
  for (const stage of [...Object.keys(settings.stageLimitsMs), 'idle', 'startup'] as Array<Stage | 'idle' | 'startup'>) {
    messages.push(limitFlag(stage));
    if (stage !== 'idle' && stage !== 'startup') messages.push(limitBasis(stage, limits[stage], 2600, limitFlag(stage)));
    const where = stage === 'idle' || stage === 'startup' ? null : stage;
    for (const role of ['candidate', 'reference'] as const) {
      for (const helloSeen of [true, false]) {
        for (const fields of [
          { timedOut: stage, timeLimitMs: 60_000, signal: 'SIGKILL' as const },
          { signal: 'SIGKILL' as const },
          { exitCode: 1, stderr: 'RuntimeError: out of memory' },
        ]) {
          messages.push(...endMessages(endedWorker(role, { exitCode: null, stage: where, ...fields }), helloSeen));
        }
      }
    }
    for (const resource of ['time', 'device-memory', 'host-memory', 'disk', 'device'] as const) {
      const fault = machineFault('reference', {
        v: 1,
        type: 'fault',
        stage: stage === 'idle' || stage === 'startup' ? null : stage,
        resource,
        message: 'slow',
      });
      messages.push(fault.message, fault.hint ?? '');
    }
  }
  messages.push(new ProblemTooLargeError('p.py', 'cpu', ESTIMATE, 24 * 1024 ** 3).message);
  const flags = [...new Set(messages.flatMap(named))];
  assert.ok(flags.includes('--timeout-correctness') && flags.includes('--eval-budget') && flags.includes('--set'), flags.join(' '));
  for (const [command, register] of [
    ['eval', registerEvalCommand],
    ['optimize', registerOptimizeCommand],
  ] as const) {
    const taken = flagsOf(register);
    assert.deepEqual(
      flags.filter((flag) => !taken.has(flag)),
      [],
      `kforge ${command} lacks flags its messages name`,
    );
  }
});
