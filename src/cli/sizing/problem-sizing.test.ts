import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { resolveCliIo } from '../io/cli-io.js';
import { estimateEvaluationSize } from '../../eval/problem/size-estimate.js';
import { sizesToEvaluate, tooLargeWithTime, type SizingFlags } from './problem-sizing.js';
import { UsageError } from '../io/usage-error.js';

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
      /^kforge optimize: 02_gelu\.py needs about [\d.]+ GiB at its own sizes, more than the 2\.00 GiB of cpu; evaluating it with --set batch_size=\d+ \(about [\d.]+ (GiB|MiB); about [\d.]+ (s|min|h) per evaluation on this machine\), recorded as problem_overrides/,
    );
  });

  it('with --eval-budget, evaluates at the largest halving of the batch that takes about that long, and says so', async () => {
    const { io: cli, stderr } = io('64G');
    const overrides = await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, evalBudget: '30s' }, cli);
    const batch = overrides.batch_size;
    assert.ok(typeof batch === 'number' && batch < 16384 && 16384 % batch === 0, JSON.stringify(overrides));
    const said = stderr.join('');
    const match =
      /^kforge eval: 02_gelu\.py takes about [\d.]+ (min|h) per evaluation at its own sizes on this machine; evaluating it with --set batch_size=(\d+) \(about (\d+) s, within --eval-budget 30s\), recorded as problem_overrides\n$/.exec(
        said,
      );
    assert.ok(match, said);
    assert.equal(Number(match[2]), batch);
    assert.ok(Number(match[3]) <= 30);
    // A size already within the budget is kept, and the time said.
    const { io: again, stderr: kept } = io('64G');
    assert.deepEqual(await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, set: ['batch_size=1'], evalBudget: '10m' }, again), { batch_size: 1 });
    assert.match(kept.join(''), /^kforge eval: 02_gelu\.py takes about \d+ s per evaluation at the sizes given on this machine, within --eval-budget 10m\n$/);
  });

  it('in a suite, warns of an --eval-budget it cannot meet and keeps the closest size', async () => {
    const { io: cli, stderr } = io('64G');
    const overrides = await sizesToEvaluate(GELU, 'cpu', { ...FLAGS, evalBudget: '1s' }, cli, { command: 'kforge optimize', unmetBudget: 'warn' });
    assert.deepEqual(overrides, { batch_size: 1 });
    assert.match(
      stderr.join(''),
      /^kforge optimize: --eval-budget 1s: no size of 02_gelu\.py fits it on this machine: an evaluation takes about \d+ s even at --set batch_size=1; .*; evaluating it at --set batch_size=1, the closest\n$/,
    );
  });

  it('refuses an --eval-budget it cannot meet or read, and on a GPU backend', async () => {
    const { io: cli } = io('64G');
    await assert.rejects(
      sizesToEvaluate(GELU, 'cpu', { ...FLAGS, evalBudget: '1s' }, cli),
      /^UsageError: --eval-budget 1s: no size of 02_gelu\.py fits it on this machine: an evaluation takes about \d+ s even at --set batch_size=1; give a longer budget/,
    );
    await assert.rejects(
      sizesToEvaluate(GELU, 'cpu', { ...FLAGS, evalBudget: 'soon' }, cli),
      /expected `--eval-budget` to be a duration such as 90s, 10m or 1h, got `soon`/,
    );
    await assert.rejects(
      sizesToEvaluate(GELU, 'cuda', { ...FLAGS, evalBudget: '60s' }, cli),
      /`--eval-budget` times the reference on this host's CPU, so it sizes evaluations on the cpu backend only, not cuda/,
    );
  });

  it('says a too-large refusal again with the time at the sizes that fit and a size of about a minute', async () => {
    const { io: cli } = io('8G');
    const plain = await estimateEvaluationSize({
      python: cli.environment.KFORGE_PYTHON!,
      workerDirectory: path.join(REPOSITORY_ROOT, 'worker'),
      environment: cli.environment,
      problemPath: GELU,
      precision: 'fp32',
      deviceType: 'cpu',
      capacityBytes: 8 * 1024 ** 3,
    });
    assert.ok(plain.ok);
    const refusal = new ProblemTooLargeError(GELU, 'cpu', plain.estimate, 8 * 1024 ** 3);
    assert.doesNotMatch(refusal.message, /per evaluation/);
    const said = await tooLargeWithTime(refusal, GELU, 'cpu', FLAGS, cli);
    assert.match(
      said.message,
      /more than the 8\.00 GiB of cpu; evaluate it at sizes that fit with --set batch_size=\d+ \(about [\d.]+ (GiB|MiB); about [\d.]+ (s|min|h) per evaluation on this machine\), or --fit to do so; an evaluation takes about \d+ s at --set batch_size=\d+, the size --eval-budget 60s picks; /,
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
