import assert from 'node:assert/strict';
import { test } from 'node:test';
import picocolors from 'picocolors';
import type { RunProgressSnapshot, ProblemProgress } from '../../agent/run/run-progress.js';
import { formatClock, renderProgressFrame } from './progress-frame.js';

const plain = picocolors.createColors(false);

function problem(index: number, overrides: Partial<ProblemProgress> = {}): ProblemProgress {
  return {
    name: `${String(index + 1).padStart(3, '0')}_a_kernelbench_problem_with_a_rather_long_descriptive_name_${index}`,
    index,
    status: 'running',
    stage: `building #${index + 1}`,
    usage: { candidates: 2, tokens: 12_345, costUsd: 0.42, deviceMs: 1000, elapsedMs: 5_000, bestSpeedup: 1.25 },
    usageAtMs: 10_000,
    last: '#1 compile_error',
    ...overrides,
  };
}

function snapshot(problems: ProblemProgress[], total = problems.length): RunProgressSnapshot {
  return { runId: 'run-1', total, resumed: false, status: 'running', startedAtMs: 0, problems, note: null };
}

test('every line fits the width, and the frame the height, at 80x24 and 200x50 with 100 problems', () => {
  const problems = Array.from({ length: 100 }, (_, index) =>
    problem(index, index < 60 ? { status: 'done', stage: 'done: max candidates', usageAtMs: index } : {}),
  );
  for (const [columns, rows] of [
    [80, 24],
    [200, 50],
    [40, 10],
    [150, 40],
  ] as const) {
    const lines = renderProgressFrame(snapshot(problems), { columns, rows }, 12_000, plain);
    assert.ok(lines.length <= rows - 1, `${columns}x${rows}: ${lines.length} lines`);
    for (const line of lines) assert.ok(line.length <= columns - 1, `${columns}x${rows}: ${line.length} cells: ${line}`);
    assert.match(lines[0]!, /60 of 100 problems done/);
    assert.match(lines.at(-1)!, /^… \d+ more problems: \d+ done/);
  }
});

test('the running problems get rows before finished ones, and long names are cut', () => {
  const problems = Array.from({ length: 100 }, (_, index) =>
    problem(index, index === 97 ? {} : { status: 'done', stage: 'done: strategy finished', usageAtMs: index }),
  );
  const lines = renderProgressFrame(snapshot(problems), { columns: 80, rows: 24 }, 12_000, plain);
  const running = lines.find((line) => line.includes('building #98'));
  assert.ok(running, lines.join('\n'));
  assert.match(running, /…/);
  assert.match(lines.at(-1)!, /… 80 more problems: 80 done$/);
});

test("80 wide: stage, elapsed ticking on for a running problem, candidates, best and the last verdict in full; the run's tokens and cost on the summary line", () => {
  const lines = renderProgressFrame(snapshot([problem(0, { name: '01_relu', last: '#12 compile_error' })], 3), { columns: 80, rows: 24 }, 12_000, plain);
  assert.match(lines[1]!, /problem\s+stage\s+elapsed\s+cand\s+best\s+last$/);
  // 5 s at the last event, 2 s since: 7 s.
  assert.match(lines[2]!, /01_relu\s+building #1\s+7s\s+2\s+1\.25x\s+#12 compile_error$/);
  assert.match(lines[0]!, /12\.3k tok {2}\$0\.42/);
  const ended = renderProgressFrame(
    snapshot([problem(0, { name: '01_relu', status: 'done', stage: 'done: no replies left', last: '#3 correct 12.34x' })]),
    { columns: 80, rows: 24 },
    12_000,
    plain,
  );
  assert.match(ended[2]!, /01_relu\s+done: no replies left\s+5s\s+2\s+1\.25x\s+#3 correct 12\.34x$/, 'nothing cut');
  const wide = renderProgressFrame(snapshot([problem(0, { name: '01_relu' })], 3), { columns: 100, rows: 24 }, 12_000, plain);
  assert.match(wide[1]!, /problem\s+stage\s+elapsed\s+cand\s+best\s+tokens\s+cost\s+last$/, 'a wider terminal has every column');
  const narrow = renderProgressFrame(snapshot([problem(0, { name: '01_relu' })], 3), { columns: 60, rows: 24 }, 12_000, plain);
  assert.match(narrow[1]!, /problem\s+stage\s+elapsed\s+cand\s+best$/, 'the last outcome goes after the tokens and the cost');
  const later = renderProgressFrame(snapshot([problem(0, { name: '01_relu' })], 3), { columns: 80, rows: 24 }, 75_000, plain);
  assert.match(later[2]!, /1m10s/);
  assert.match(lines.at(-1)!, /… 2 more problems: 2 waiting/);
  assert.match(lines[0]!, /0 of 3 problems done, 1 running/);
});

test('a frame without a summary line when every problem fits', () => {
  const lines = renderProgressFrame(
    snapshot([problem(0), problem(1, { status: 'done', stage: 'done: no replies left' })]),
    { columns: 200, rows: 50 },
    12_000,
    plain,
  );
  assert.equal(lines.length, 4);
  assert.match(lines[3]!, /done: no replies left/);
});

test('clock format', () => {
  assert.equal(formatClock(999), '0s');
  assert.equal(formatClock(65_000), '1m05s');
  assert.equal(formatClock(3 * 3600_000 + 7 * 60_000), '3h07m');
});
