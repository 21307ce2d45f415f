import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { fixturePath, REPOSITORY_ROOT, TEST_PYTHON } from '../../../test-support/fixture-paths.js';
import { terminalFrames, type TerminalFrame } from '../../../test-support/terminal-frames.js';

/**
 * A files replay of two problems in a real 80×24 pseudo-terminal, as a person runs it: the
 * compiled CLI, the files provider, and the fake worker taking 2 s to start (as the real one takes
 * to import PyTorch on a small machine). Each problem gets two replies; 01_first's first candidate
 * and 02_second's last one crash.
 */
let folder: string;
let exitCode: number | undefined;
let frames: TerminalFrame[];
let after_: string[];
let raw: string;

const candidate = (marker: string): string => `import torch\n# ${marker}\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n`;

before(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'kforge-live-view-'));
  for (const name of ['01_first', '02_second']) {
    await mkdir(path.join(folder, 'replies', name), { recursive: true });
    await mkdir(path.join(folder, 'problems'), { recursive: true });
    await writeFile(path.join(folder, 'problems', `${name}.py`), `# A problem the fake reference accepts: ${name}.\nclass Model: pass\n`);
  }
  await writeFile(path.join(folder, 'replies', '01_first', '1.py'), candidate('fake-worker: segfault'));
  await writeFile(path.join(folder, 'replies', '01_first', '2.py'), candidate('first, correct'));
  await writeFile(path.join(folder, 'replies', '02_second', '1.py'), candidate('second, correct'));
  await writeFile(path.join(folder, 'replies', '02_second', '2.py'), candidate('fake-worker: segfault'));
  const output = path.join(folder, 'terminal.raw');
  const result = await execa(
    TEST_PYTHON,
    [
      path.join(REPOSITORY_ROOT, 'test-support', 'pty-run.py'),
      '80',
      '24',
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
      '--store',
      path.join(folder, 'kforge.db'),
      '--out',
      path.join(folder, 'out'),
    ],
    {
      reject: false,
      cwd: folder,
      env: {
        KFORGE_PYTHON: TEST_PYTHON,
        KFORGE_WORKER_DIR: fixturePath('slow-start-worker'),
        KFORGE_CACHE_DIR: path.join(folder, 'cache'),
        TERM: 'xterm-256color',
      },
      extendEnv: true,
      // About 15 s on an idle 2-core machine.
      timeout: 300_000,
    },
  );
  exitCode = result.exitCode;
  raw = await readFile(output, 'utf8');
  // The last frame: the summary line, the header and both problems' rows; the report follows.
  ({ frames, after: after_ } = terminalFrames(raw, () => 4));
});

after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Each problem's row in each frame, cut into its cells (the view pads them with no-break spaces, two or more between cells). */
function rowsOf(name: string): string[][] {
  return frames.flatMap((frame) =>
    frame.lines
      .map((line) => line.replace(/\u00a0/g, ' '))
      .filter((line) => line.startsWith(`${name} `))
      .map((line) => line.trim().split(/ {2,}/)),
  );
}

describe('kforge optimize: the live view of a files replay, and the report after it, on an 80-column terminal', () => {
  it('ends well, and the report fits the terminal', () => {
    assert.equal(exitCode, 0, raw.slice(-3000));
    const reportLines = after_.filter((line) => line.length > 0);
    assert.match(reportLines[0]!, /^problem\s+verdict\s+cand/, after_.join('\n'));
    for (const line of [...reportLines, ...frames.flatMap((frame) => frame.lines)]) assert.ok([...line].length <= 80, `${[...line].length} cells: ${line}`);
    assert.match(reportLines[1]!, /^01_first\s+correct\s+2\s+1\/2/);
    assert.match(reportLines[2]!, /^02_second\s+correct\s+2\s+1\/2/);
  });

  it("numbers each problem's candidates as its candidate count does, not by their store ids", () => {
    const second = rowsOf('02_second');
    assert.ok(second.length > 0, raw.slice(-3000));
    // Columns: problem, stage, elapsed, cand, best, last.
    for (const [, stage, , count] of second) {
      const number = /#(\d+)/.exec(stage!)?.[1];
      if (number) assert.equal(number, count, `the stage names candidate ${number} while the count says ${count}`);
    }
    assert.ok(!frames.some((frame) => frame.lines.some((line) => /#[34]\b/.test(line))), 'no store id (3, 4) in the view');
  });

  it("shows a crashed candidate's verdict, to the end", () => {
    assert.ok(
      rowsOf('01_first').some((cells) => cells.at(-1) === '#1 crashed'),
      rowsOf('01_first')
        .map((cells) => cells.join(' | '))
        .join('\n'),
    );
    const lastFrame = frames.at(-1)!.lines;
    assert.match(lastFrame[0]!, /^2 of 2 problems done, finished/);
    assert.match(lastFrame.find((line) => line.startsWith('02_second'))!, /done: no replies left\s+.*\s#2 crashed$/);
  });

  it('says that a candidate waits for its worker to start, not that it reads the reply; a replay that ran out is no failed call', () => {
    const stages = rowsOf('01_first').map((cells) => [cells[1], cells[2]]);
    assert.ok(
      stages.some(([stage]) => stage === 'starting #1'),
      stages.map((cells) => cells.join(' ')).join('\n'),
    );
    const reading = new Set(stages.filter(([stage]) => stage === 'reading the reply').map(([, elapsed]) => elapsed));
    assert.ok(reading.size <= 1, `"reading the reply" stayed for ${[...reading].join(', ')}`);
    assert.doesNotMatch(raw, /model call failed/);
  });
});
