import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { execa } from 'execa';
import { REPOSITORY_ROOT } from '../../core/repository-paths.js';
import { isProcessAlive, waitForDeath } from '../../../test-support/process-liveness.js';
import { watchLauncher } from './launcher-watch.js';

const folder = mkdtempSync(path.join(tmpdir(), 'kforge-launcher-'));
after(() => rmSync(folder, { recursive: true, force: true }));

test('a process npm started notices when its parent changes; one started otherwise never does', async () => {
  let parent = 100;
  const watched = watchLauncher({ environment: { npm_command: 'exec' }, launcherPid: 100, parentPid: () => parent, intervalMs: 10 });
  let gone = false;
  void watched.gone.then(() => (gone = true));
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(gone, false);
  parent = 1;
  // The watch's timer does not hold the event loop open (a server's socket does); this test's timer does.
  const timeout = setTimeout(() => undefined, 5_000);
  await watched.gone;
  clearTimeout(timeout);
  const free = watchLauncher({ environment: {}, launcherPid: 100, parentPid: () => (parent += 1), intervalMs: 10 });
  let freeGone = false;
  void free.gone.then(() => (freeGone = true));
  await new Promise((resolve) => setTimeout(resolve, 40));
  free.stop();
  assert.equal(freeGone, false);
});

test('a launcher already gone when the watch starts is noticed at the first look', async () => {
  const timeout = setTimeout(() => undefined, 5_000);
  await watchLauncher({ environment: { npm_command: 'exec' }, launcherPid: 100, parentPid: () => 1, intervalMs: 10 }).gone;
  clearTimeout(timeout);
});

test('killing the launcher of `kforge serve` (npm, here a shell standing in for it) ends the server too', { timeout: 120_000 }, async () => {
  // The shell plays npm exec: it starts kforge with npm's mark and waits; SIGKILL leaves kforge reparented.
  // It leads its own process group, so that whatever outlives a failure is killed with the group.
  const cli = path.join(REPOSITORY_ROOT, 'bin', 'kforge.js');
  const launcher = execa('sh', ['-c', `"${process.execPath}" "${cli}" serve --port 0 --store "${path.join(folder, 'kforge.db')}" & echo "server $!"; wait`], {
    env: { npm_command: 'exec' },
    reject: false,
    detached: true,
  });
  const exited = once(launcher, 'exit');
  try {
    const pid = await new Promise<number>((resolve, reject) => {
      let seen = '';
      launcher.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /server (\d+)[\s\S]*http:\/\//.exec(seen);
        if (match) resolve(Number(match[1]));
      });
      setTimeout(() => reject(new Error(`no URL within 60 s: ${seen}`)), 60_000).unref();
    });
    assert.ok(isProcessAlive(pid));
    launcher.kill('SIGKILL');
    // The shell's exit, not the end of its output: the server holds the same pipe until it stops.
    await exited;
    assert.ok(await waitForDeath(pid, 15_000), `kforge serve (pid ${pid}) outlived its launcher`);
  } finally {
    try {
      process.kill(-launcher.pid!, 'SIGKILL');
    } catch {
      // The group is gone: nothing outlived the test.
    }
  }
});
