import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { JudgedTrial } from '../process/protocol.js';
import { OutputHandover, type JudgedOutput, type JudgeStep } from './output-handover.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-handover-'));
after(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
function outputFolder(): string {
  const folder = path.join(root, `case-${(folders += 1)}`, 'out');
  mkdirSync(folder, { recursive: true });
  return folder;
}

function saved(folder: string, name: string, seed: number, extra: Partial<JudgedOutput> = {}): JudgedOutput {
  const file = path.join(folder, name);
  writeFileSync(file, 'output bytes');
  return { seed, path: file, input_digest: `digest-${seed}`, ...extra };
}

/** A judge that fails the outputs whose seed is odd, and records every request it gets. */
function recordingJudge(requests: JudgedOutput[][], degenerate = false) {
  return async (outputs: JudgedOutput[]): Promise<JudgeStep> => {
    requests.push(outputs);
    const trials: JudgedTrial[] = outputs.map((output) => ({
      seed: output.seed,
      passed: output.seed % 2 === 0,
      check: output.seed % 2 === 0 ? null : 'mismatch',
      max_abs_error: 0,
      max_rel_error: 0,
      fp64_max_abs_error: null,
      fp64_max_rel_error: null,
    }));
    return { ok: true, value: { v: 1, type: 'judgement', passed: trials.every((trial) => trial.passed), degenerate, trials } };
  };
}

describe('OutputHandover', () => {
  it('judges handed-over outputs once, deletes their files, and keeps the listed order', async () => {
    const folder = outputFolder();
    const requests: JudgedOutput[][] = [];
    const handover = new OutputHandover({ outputDirectory: folder, judge: recordingJudge(requests) });
    const first = saved(folder, 'correctness-0.out', 2);
    const second = saved(folder, 'correctness-1.out', 4);
    assert.equal(handover.earlyJudgingMs, 0);
    assert.equal(await handover.accept({ v: 1, type: 'kept', outputs: [first] }), null);
    assert.ok(handover.earlyJudgingMs > 0, 'the time spent judging early is counted');
    assert.equal(existsSync(first.path), false, 'a judged file is deleted');
    assert.equal(existsSync(second.path), true);
    const third = saved(folder, 'correctness-2.out', 5);
    const judged = await handover.judgement([first, second, third]);
    assert.ok(judged.ok);
    assert.deepEqual(
      judged.value.trials.map((trial) => trial.seed),
      [2, 4, 5],
    );
    assert.equal(judged.value.passed, false, 'one failed trial fails the whole judgement');
    assert.deepEqual(
      requests.map((request) => request.map((output) => path.basename(output.path))),
      [['correctness-0.out'], ['correctness-1.out', 'correctness-2.out']],
      'the handed-over output is not judged again',
    );
    assert.equal(existsSync(second.path) || existsSync(third.path), false);
  });

  it('judges an output again when it is listed with other seeds than it was handed over with', async () => {
    const folder = outputFolder();
    const requests: JudgedOutput[][] = [];
    const handover = new OutputHandover({ outputDirectory: folder, judge: recordingJudge(requests) });
    const early = saved(folder, 'timed-3.out', 2, { call: 3, input_seed: 10 });
    await handover.accept({ v: 1, type: 'kept', outputs: [early] });
    const judged = await handover.judgement([{ ...early, input_seed: 11 }]);
    assert.ok(judged.ok);
    assert.equal(requests.length, 2, 'a listing that differs from the handed-over entry is judged afresh');
  });

  it('carries a degenerate judgement over from a handed-over output', async () => {
    const folder = outputFolder();
    const handover = new OutputHandover({ outputDirectory: folder, judge: recordingJudge([], true) });
    const early = saved(folder, 'correctness-0.out', 2);
    await handover.accept({ v: 1, type: 'kept', outputs: [early] });
    const judged = await handover.judgement([early]);
    assert.ok(judged.ok);
    assert.equal(judged.value.degenerate, true);
  });

  it('never deletes a file outside the output folder, nor through a folder replaced by a link', async () => {
    const folder = outputFolder();
    const outside = path.join(root, 'precious.txt');
    writeFileSync(outside, 'keep me');
    const handover = new OutputHandover({ outputDirectory: folder, judge: recordingJudge([]) });
    await handover.accept({ v: 1, type: 'kept', outputs: [{ seed: 2, path: outside }] });
    await handover.accept({ v: 1, type: 'kept', outputs: [{ seed: 4, path: path.join(folder, '..', '..', 'precious.txt') }] });
    assert.equal(existsSync(outside), true);

    const linked = path.join(root, 'linked');
    mkdirSync(linked);
    const target = path.join(linked, 'victim.out');
    writeFileSync(target, 'keep me too');
    const swapped = path.join(root, `case-${(folders += 1)}`);
    mkdirSync(swapped);
    symlinkSync(linked, path.join(swapped, 'out'));
    const throughLink = new OutputHandover({ outputDirectory: path.join(swapped, 'out'), judge: recordingJudge([]) });
    await throughLink.accept({ v: 1, type: 'kept', outputs: [{ seed: 2, path: path.join(swapped, 'out', 'victim.out') }] });
    assert.equal(existsSync(target), true, 'an output folder that is a link is not trusted');
  });

  it('keeps judged files when the scratch folder is kept', async () => {
    const folder = outputFolder();
    const handover = new OutputHandover({ outputDirectory: folder, judge: recordingJudge([]), keepFiles: true });
    const early = saved(folder, 'correctness-0.out', 2);
    await handover.accept({ v: 1, type: 'kept', outputs: [early] });
    assert.equal(existsSync(early.path), true);
  });
});
