import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPOSITORY_ROOT } from '../../test-support/fixture-paths.js';
import { ProblemTooLargeError } from '../eval/problem/problem-too-large-error.js';
import { resolveCliIo } from './cli-io.js';
import { sizesToEvaluate, type SizingFlags } from './problem-sizing.js';
import { UsageError } from './usage-error.js';

/** 02_gelu at its own sizes: two 16384×16384 float32 tensors a call, about 6 GiB to evaluate. */
const GELU = path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py');
const FLAGS: SizingFlags = { set: [], fit: false, precision: 'fp32', timing: true };

function io(capacity: string): { io: ReturnType<typeof resolveCliIo>; stderr: string[] } {
  const stderr: string[] = [];
  const environment = { PATH: process.env.PATH, KFORGE_PYTHON: process.env.KFORGE_PYTHON ?? '/usr/bin/python3', KFORGE_DEVICE_MEMORY_BYTES: capacity };
  return { io: resolveCliIo({ environment, stderr: { write: (text: string) => stderr.push(text) }, cwd: REPOSITORY_ROOT }), stderr };
}

describe('sizesToEvaluate: --set and --fit', { timeout: 300_000 }, () => {
  it('leaves the sizes alone without --fit, and does not run the estimate unless asked to check --set', async () => {
    const { io: cli, stderr } = io('1K');
    assert.deepEqual(await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, set: ['dim=64'] }, cli), { dim: 64 });
    assert.deepEqual(stderr, []);
  });

  it('with --fit, sizes a problem that does not fit this machine, says so, and returns the sizes', async () => {
    const { io: cli, stderr } = io('2G');
    const overrides = await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, fit: true }, cli, { command: 'kforge optimize' });
    assert.ok(typeof overrides.batch_size === 'number' && overrides.batch_size < 16384, JSON.stringify(overrides));
    assert.match(
      stderr.join(''),
      /^kforge optimize: 02_gelu\.py needs about [\d.]+ GiB at its own sizes, more than the 2\.00 GiB of cpu; evaluating it with --set batch_size=\d+/,
    );
  });

  it('with --fit, refuses a problem no size of which fits', async () => {
    const { io: cli } = io('1K');
    await assert.rejects(sizesToEvaluate(GELU, 'cpu', { ...FLAGS, fit: true }, cli), ProblemTooLargeError);
  });

  it('when asked to check, refuses a --set name the problem lacks, naming its constants', async () => {
    const { io: cli } = io('64G');
    await assert.rejects(
      sizesToEvaluate(GELU, 'cpu', { ...FLAGS, set: ['batchsize=4'] }, cli, { command: 'kforge optimize', validate: true }),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.match(error.message, /^02_gelu\.py: .*`batchsize`.*its constants: batch_size, dim/);
        return true;
      },
    );
    assert.deepEqual(await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, set: ['batch_size=4'] }, cli, { command: 'kforge optimize', validate: true }), {
      batch_size: 4,
    });
  });
});
