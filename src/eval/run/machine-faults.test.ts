import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { registerEvalCommand } from '../../cli/commands/eval.js';
import { fixturePath } from '../../../test-support/fixture-paths.js';
import { MachineFaultError } from '../machine-fault-error.js';
import { meaningfulStderrLine } from '../process/stderr-summary.js';
import { outcomeOfWorkerEnd } from './worker-end-outcome.js';
import { WorkerFaultError } from '../process/worker-fault-error.js';
import type { WorkerProcessResult } from '../process/worker-process-types.js';
import { endedWorker } from '../../../test-support/worker-process-result.js';

const ended = (fields: Partial<WorkerProcessResult>): WorkerProcessResult => endedWorker('reference', fields);

const CUDA_STARTUP_FAILURE = [
  'Traceback (most recent call last):',
  '  File "/repo/worker/kforge_worker/roles/warm_start.py", line 40, in warm_up',
  '    torch.cuda.init()',
  'RuntimeError: CUDA error: out of memory',
  'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
  'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
  'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
  '',
].join('\n');

describe("a reference worker's end is never the candidate's verdict", () => {
  it("killed (the out-of-memory killer's SIGKILL) is a machine fault naming host memory", () => {
    assert.throws(
      () => outcomeOfWorkerEnd(ended({ signal: 'SIGKILL', stage: 'reference' }), 'reference-ready', true),
      (error: unknown) => {
        assert.ok(error instanceof MachineFaultError);
        assert.equal(error.resource, 'host-memory');
        assert.match(error.message, /the reference process \(which never imports the candidate\) died during the reference stage of .*SIGKILL.*; no verdict/);
        return true;
      },
    );
  });

  it('past its limit is a machine fault, with the flag that raises it', () => {
    assert.throws(
      () => outcomeOfWorkerEnd(ended({ timedOut: 'reference', timeLimitMs: 300_000, stage: 'reference' }), 'reference-ready', true),
      (error: unknown) => {
        assert.ok(error instanceof MachineFaultError);
        assert.match(error.hint, /--timeout-reference/);
        return true;
      },
    );
  });

  it('a traceback is a fault of kforge (exit 3), quoting the exception line', () => {
    const stderr = 'Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: \'seed\'\n';
    assert.throws(
      () => outcomeOfWorkerEnd(ended({ exitCode: 1, stage: 'judge', stderr }), 'judgement', true),
      (error: unknown) => {
        assert.ok(error instanceof WorkerFaultError);
        assert.match(error.message, /exited with status 1 during the judge stage: KeyError: 'seed'; this is a fault of kforge/);
        return true;
      },
    );
  });

  it('a candidate worker that could not start for want of memory is a machine fault quoting the CUDA error, not its last boilerplate line', () => {
    assert.equal(meaningfulStderrLine(CUDA_STARTUP_FAILURE), 'RuntimeError: CUDA error: out of memory');
    assert.throws(
      () => outcomeOfWorkerEnd(ended({ role: 'candidate', exitCode: 1, stderr: CUDA_STARTUP_FAILURE }), 'hello', false),
      (error: unknown) => {
        assert.ok(error instanceof MachineFaultError);
        assert.equal(error.resource, 'worker-start');
        assert.match(error.message, /ran out of memory before saying hello \(RuntimeError: CUDA error: out of memory\)/);
        assert.doesNotMatch(error.message, /TORCH_USE_CUDA_DSA/);
        return true;
      },
    );
  });

  it("a candidate worker's own crash stays its verdict", () => {
    const outcome = outcomeOfWorkerEnd(ended({ role: 'candidate', signal: 'SIGSEGV', stage: 'correctness' }), 'correctness-outputs', true);
    assert.equal(outcome.verdict, 'crashed');
  });
});

/** `kforge eval PROBLEM relu-candidate.py --backend cpu --json --no-timing --guard-policy pytorch ARGS…` in this process, with real workers. */
async function evalReluCandidate(problem: string, ...args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number | undefined }> {
  const seen = { stdout: '', stderr: '', exitCode: undefined as number | undefined };
  const program = new Command().exitOverride();
  registerEvalCommand(program, {
    stdout: { write: (text: string) => void (seen.stdout += text) },
    stderr: { write: (text: string) => void (seen.stderr += text) },
    setExitCode: (code) => void (seen.exitCode = code),
    environment: process.env,
    cwd: process.cwd(),
    color: false,
  });
  await program.parseAsync([
    'node',
    'kforge',
    'eval',
    fixturePath('machine-faults', problem),
    fixturePath('machine-faults', 'relu-candidate.py'),
    '--backend',
    'cpu',
    '--json',
    '--no-timing',
    '--guard-policy',
    'pytorch',
    ...args,
  ]);
  return seen;
}

describe('kforge eval when the reference runs out of memory (real workers)', () => {
  it('exits 2 without a verdict, saying what ran out', async () => {
    const seen = await evalReluCandidate('reference-out-of-memory.py', '--trials', '1');
    assert.equal(seen.exitCode, 2, seen.stderr);
    assert.equal(seen.stdout, '', 'no verdict is printed');
    assert.match(
      seen.stderr,
      /the machine could not evaluate: the reference process \(which never imports the candidate\) ran out of host memory|reference's forward raised out of memory/,
    );
    assert.match(seen.stderr, /no verdict/);
  });
});

describe('kforge eval when the reference is too slow at these sizes for its stage (real workers)', () => {
  it('exits 2 without a verdict after the first trial, with the pace, a batch size that fits and the flag', async () => {
    const seen = await evalReluCandidate('reference-too-slow.py', '--trials', '5', '--timeout-reference', '8');
    assert.equal(seen.exitCode, 2, seen.stderr);
    assert.equal(seen.stdout, '', 'no verdict is printed');
    assert.match(
      seen.stderr,
      /the machine could not evaluate: the reference's first trial took \d+(\.\d)? s at these sizes on this machine, and the reference stage computes 5 trials: about \d+(\.\d)? s, more than its limit of 8\.0 s; at --set batch_size=(1|2|4|8|16) it would take about 4\.0 s or less \(reference process, reference stage\); no verdict/,
    );
    // Without the pace, the five trials of two 1.5 s forwards would have run into the 8 s limit
    // and been killed there ("ran past its limit"), with no size to try.
    assert.match(seen.stderr, /raise the limit with --timeout-reference SECONDS/);
    assert.doesNotMatch(seen.stderr, /ran past its limit/);
  });
});
