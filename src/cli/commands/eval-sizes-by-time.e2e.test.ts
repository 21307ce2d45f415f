import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { evaluationResultSchema } from '../../core/verdict.js';
import { REPOSITORY_ROOT } from '../../../test-support/fixture-paths.js';
import { TORCH_PYTHON, torchUnavailable } from '../../../test-support/torch-python.js';

/**
 * A problem too large and too slow for this machine at its own sizes (02_gelu's gpu preset:
 * 16384×16384, with an artificial 8 GiB budget), evaluated by the built `kforge eval` with the real
 * worker as a user would: the refusal offers the sizes that fit with how long an evaluation takes
 * at them, and a size that takes about a minute; `--eval-budget` evaluates at such a size. The
 * candidate is plain PyTorch (`--guard-policy pytorch`), so nothing is built.
 */
const skip = torchUnavailable();
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-sizes-by-time-'));
after(() => rmSync(root, { recursive: true, force: true }));

const PROBLEM = path.join(REPOSITORY_ROOT, 'problems', 'level1', '02_gelu.py');
const CANDIDATE = path.join(root, 'gelu.py');
writeFileSync(
  CANDIDATE,
  [
    'import math',
    'import torch',
    '',
    '',
    'class ModelNew(torch.nn.Module):',
    '    def forward(self, x):',
    '        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))',
    '',
  ].join('\n'),
);

function kforgeEval(flags: string[]) {
  const args = ['eval', PROBLEM, CANDIDATE, '--backend', 'cpu', '--preset', 'gpu', '--guard-policy', 'pytorch', '--json', ...flags];
  return execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), ...args], {
    reject: false,
    cwd: root,
    timeout: 400_000,
    env: { KFORGE_PYTHON: TORCH_PYTHON, KFORGE_CACHE_DIR: path.join(root, 'cache'), KFORGE_DEVICE_MEMORY_BYTES: '8G', TMPDIR: root, NO_COLOR: '1' },
  });
}

describe('kforge eval: sizes offered by time (cpu backend, real worker)', { skip }, () => {
  it('refuses a problem too large here, offering the sizes that fit with their time and a size of about a minute', { timeout: 300_000 }, async () => {
    const run = await kforgeEval([]);
    assert.equal(run.exitCode, 2, String(run.stderr));
    assert.equal(String(run.stdout), '');
    assert.match(
      String(run.stderr),
      /^kforge eval: .*02_gelu\.py needs about [\d.]+ GiB to evaluate at its own sizes \(inputs 1\.00 GiB a set, output 1\.00 GiB\), more than the 8\.00 GiB of cpu; evaluate it at sizes that fit with --set batch_size=\d+ \(about [\d.]+ (GiB|MiB); about [\d.]+ (s|min|h) per evaluation on this machine\), or --fit to do so; an evaluation takes about \d+ s at --set batch_size=\d+, the size --eval-budget 60s picks; figures at other sizes are recorded as `problem_overrides`$/,
    );
  });

  it('evaluates at the size --eval-budget picks, says so, and records it', { timeout: 400_000 }, async () => {
    const run = await kforgeEval(['--eval-budget', '40s']);
    assert.equal(run.exitCode, 0, String(run.stderr));
    const said =
      /kforge eval: 02_gelu\.py takes about [\d.]+ (min|h) per evaluation at its own sizes on this machine; evaluating it with --set batch_size=(\d+) \(about (\d+) s, within --eval-budget 40s\), recorded as problem_overrides\n/.exec(
        String(run.stderr),
      );
    assert.ok(said, String(run.stderr));
    assert.ok(Number(said[3]) <= 40);
    const result = evaluationResultSchema.parse(JSON.parse(String(run.stdout)));
    assert.equal(result.verdict, 'correct', JSON.stringify(result.reasons));
    assert.deepEqual(result.problem_overrides, { batch_size: Number(said[2]) });
  });
});
