import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { terminalFrames, type TerminalFrame } from '../../../test-support/terminal-frames.js';

/**
 * `kforge optimize` over 100 problems in a real pseudo-terminal (test-support/pty-run.py), as a
 * person runs it: the compiled CLI, the files provider, the fake worker. One problem gets a
 * candidate whose build takes 3 s; the other 99 find no replies left and end at once.
 */
let folder: string;

before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-terminal-'));
  await mkdir(path.join(folder, 'problems'));
  await mkdir(path.join(folder, 'replies'));
  for (let index = 0; index < 100; index += 1) {
    const name = `${String(index + 1).padStart(3, '0')}_conv_transposed_3d_square_input_asymmetric_kernel_padded_dilated_${index}.py`;
    await writeFile(path.join(folder, 'problems', name), `# A problem the fake reference accepts (${index}).\nclass Model: pass\n`);
  }
  const reply = '```python\nimport torch\n# fake-worker: slow-build-3\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n```\n';
  await writeFile(path.join(folder, 'replies', '1.py'), reply);
});

after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** The frames the view drew; the last one ends at its `… N more problems` line (the report follows it). */
function framesOf(raw: string): TerminalFrame[] {
  return terminalFrames(raw, (lines) => lines.findIndex((line) => line.startsWith('… ')) + 1).frames;
}

async function runInTerminal(columns: number, rows: number): Promise<{ exitCode: number | undefined; raw: string }> {
  const output = path.join(folder, `terminal-${columns}x${rows}.raw`);
  const result = await execa(
    TEST_PYTHON,
    [
      path.join(REPOSITORY_ROOT, 'test-support', 'pty-run.py'),
      String(columns),
      String(rows),
      output,
      '--',
      process.execPath,
      path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'),
      'optimize',
      path.join(folder, 'problems'),
      '--provider',
      'files',
      '--dir',
      path.join(folder, 'replies'),
      '--backend',
      'cpu',
      '--max-candidates',
      '1',
      '--store',
      path.join(folder, `${columns}.db`),
      '--out',
      path.join(folder, `out-${columns}`),
    ],
    {
      reject: false,
      cwd: folder,
      env: { KFORGE_PYTHON: TEST_PYTHON, KFORGE_WORKER_DIR: fixturePath('fake-worker'), KFORGE_CACHE_DIR: path.join(folder, 'cache'), TERM: 'xterm-256color' },
      extendEnv: true,
      // About 10 s on an idle 2-core machine; far more on a loaded one.
      timeout: 300_000,
    },
  );
  return { exitCode: result.exitCode, raw: await readFile(output, 'utf8') };
}

describe('kforge optimize in a real terminal with 100 problems', () => {
  for (const [columns, rows] of [
    [80, 24],
    [200, 50],
  ] as const) {
    it(`fits ${columns}x${rows}: no line wraps, no frame is taller than the screen, each redraw reaches the top of the last`, async () => {
      const { exitCode, raw } = await runInTerminal(columns, rows);
      assert.equal(exitCode, 0, raw.slice(-2000));
      const frames = framesOf(raw);
      assert.ok(frames.length >= 5, `${frames.length} frames`);
      frames.forEach((frame, index) => {
        assert.ok(frame.lines.length <= rows - 1, `frame ${index} has ${frame.lines.length} lines:\n${frame.lines.join('\n')}`);
        for (const line of frame.lines) assert.ok([...line].length <= columns - 1, `frame ${index}: ${[...line].length} cells: ${line}`);
        if (index > 0)
          assert.equal(frame.erasedAbove, frames[index - 1]!.lines.length, `the redraw before frame ${index} goes up as far as frame ${index - 1} reached`);
      });
      const text = frames.map((frame) => frame.lines.join('\n')).join('\n');
      assert.match(frames.at(-1)!.lines[0]!, /^100 of 100 problems done, finished/);
      assert.match(text, /… \d+ more problems: \d+ (done|waiting)/);
      // While the candidate builds, its row says so and its elapsed time moves on.
      const building = frames.flatMap((frame) =>
        frame.lines.filter((line) => /building #1\s/.test(line)).map((line) => /building #1\s+(\d+s)/.exec(line)?.[1]),
      );
      assert.ok(new Set(building).size >= 2, `elapsed while building: ${building.join(', ')}`);
      assert.match(text, /no replies left/);
      assert.doesNotMatch(raw, /model call failed/);
      assert.doesNotMatch(raw, /\{"level":/, "no raw JSON log lines on a person's terminal");
    });
  }
});
