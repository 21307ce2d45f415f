import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import type { PipelineEvent, PipelinedEvaluateOptions } from '../eval/pipeline-events.js';
import { PipelineEvaluationQueue, type LeasingEvaluator } from './pipeline-evaluation-queue.js';

const request = (candidatePath: string): EvaluationRequest => ({ problemPath: 'p.py', candidatePath, backend: 'cuda', precision: 'fp32', tolerance: 'kernelbench', deviceIndex: 1 });

/** A pipeline stand-in: every call starts at once; `lease` names the device a call holds and for how long (none: a build failure). */
class ScriptedPipeline implements LeasingEvaluator {
  readonly started: string[] = [];
  readonly #finish = new Map<string, () => void>();

  constructor(private readonly leases: Record<string, { device: string; heldMs: number } | undefined>) {}

  async evaluate(request: EvaluationRequest, options: PipelinedEvaluateOptions = {}): Promise<EvaluationResult> {
    this.started.push(request.candidatePath);
    await new Promise<void>((resolve) => this.#finish.set(request.candidatePath, resolve));
    const lease = this.leases[request.candidatePath];
    if (lease) {
      options.onPipelineEvent?.({ kind: 'device-acquired', device: lease.device, waitedMs: 0 });
      options.onPipelineEvent?.({ kind: 'device-released', device: lease.device, heldMs: lease.heldMs });
    }
    return { verdict: lease ? 'correct' : 'compile_error' } as EvaluationResult;
  }

  finish(candidatePath: string): void {
    this.#finish.get(candidatePath)!();
  }
}

test('requests go to the pipeline together; each reports the device it held and for how long', async () => {
  const pipeline = new ScriptedPipeline({ 'a.py': { device: 'cuda:1', heldMs: 4200 }, 'b.py': undefined });
  let clock = 1000;
  const queue = new PipelineEvaluationQueue(pipeline, () => clock);
  const forwarded: PipelineEvent[] = [];
  const a = queue.submit(request('a.py'), { onPipelineEvent: (event) => forwarded.push(event) });
  const b = queue.submit(request('b.py'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(pipeline.started, ['a.py', 'b.py'], 'the second started before the first finished');
  assert.equal(queue.pending, 2);
  clock = 1700;
  pipeline.finish('b.py');
  pipeline.finish('a.py');
  const [first, second] = await Promise.all([a, b]);
  assert.deepEqual([first.device, first.deviceMs, first.waitedMs, first.result.verdict], ['cuda:1', 4200, 700, 'correct']);
  // A candidate that never held the device (its build failed) cost the device nothing.
  assert.deepEqual([second.device, second.deviceMs, second.waitedMs, second.result.verdict], ['cuda:1', 0, 700, 'compile_error']);
  assert.deepEqual(forwarded.map((event) => event.kind), ['device-acquired', 'device-released'], "the caller's own listener still hears the pipeline");
  assert.equal(queue.pending, 0);
});

test('an evaluation that throws leaves the queue with nothing pending', async () => {
  const queue = new PipelineEvaluationQueue({ evaluate: async () => Promise.reject(new Error('python3 cannot import torch')) });
  await assert.rejects(queue.submit(request('a.py')), /cannot import torch/);
  assert.equal(queue.pending, 0);
});
