import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { signalProcessGroup } from './process-group.js';
import { ProcessGroupPauser } from './process-group-pauser.js';

const started: number[] = [];
after(() => {
  for (const pid of started) signalProcessGroup(pid, 'SIGKILL');
});

/** A real background process group: a shell that sleeps, with a child of its own. */
function backgroundGroup(): number {
  const child = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true, stdio: 'ignore' });
  started.push(child.pid!);
  return child.pid!;
}

function state(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 100 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check());
}

describe('ProcessGroupPauser', () => {
  it('stops registered groups while paused and continues them after, also ones added meanwhile', async () => {
    const pauser = new ProcessGroupPauser();
    const early = backgroundGroup();
    pauser.add(early);
    await eventually(() => state(early) === 'S');
    const resume = pauser.pause();
    await eventually(() => state(early) === 'T');
    const late = backgroundGroup();
    pauser.add(late);
    await eventually(() => state(late) === 'T');
    const nested = pauser.pause();
    nested();
    assert.equal(state(early), 'T', 'an inner pause ending does not continue them');
    resume();
    await eventually(() => state(early) === 'S' && state(late) === 'S');
    assert.equal(pauser.stats().pauses, 1);
  });

  it('continues a group removed while paused, and leaves unregistered ones alone', async () => {
    const pauser = new ProcessGroupPauser();
    const group = backgroundGroup();
    const other = backgroundGroup();
    pauser.add(group);
    await eventually(() => state(group) === 'S' && state(other) === 'S');
    const resume = pauser.pause();
    await eventually(() => state(group) === 'T');
    pauser.remove(group);
    await eventually(() => state(group) === 'S');
    assert.equal(state(other), 'S');
    resume();
  });
});
