import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { captureBuild, restoreBuild, utimesSeconds } from './build-snapshot.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-build-snapshot-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Times (ns) whose old conversion (`Number(ns) / 1e9`) rounded up into the next microsecond. */
const ROUNDED_UP_BEFORE = [1796407095008642961n, 1796407095034568847n];

const mtimeNs = (file: string): bigint => statSync(file, { bigint: true }).mtimeNs;

describe('copies of a build keep their times, never later than the originals', () => {
  it('converts a time for utimes without rounding it up', () => {
    for (const timeNs of ROUNDED_UP_BEFORE) {
      assert.ok(BigInt(Math.round(utimesSeconds(timeNs) * 1e6)) * 1000n <= timeNs, String(timeNs));
      assert.ok(BigInt(Math.round(Number(timeNs) / 1e3)) * 1000n > timeNs, `the old conversion of ${timeNs} rounded up`);
    }
  });

  it('captures and restores files no newer than they were, so ninja finds the build up to date', async (t) => {
    if (spawnSync('touch', ['--version']).status !== 0) return t.skip('needs GNU touch to set nanosecond times');
    const build = path.join(root, 'build');
    mkdirSync(path.join(build, 'ext'), { recursive: true });
    const files = ROUNDED_UP_BEFORE.map((timeNs, index) => {
      const file = path.join(build, 'ext', `file-${index}.o`);
      writeFileSync(file, `object ${index}`);
      const seconds = `${timeNs / 1_000_000_000n}.${String(timeNs % 1_000_000_000n).padStart(9, '0')}`;
      assert.equal(spawnSync('touch', ['-m', '-d', `@${seconds}`, file]).status, 0);
      assert.equal(mtimeNs(file), timeNs, 'the file system keeps nanoseconds');
      return { relative: `ext/file-${index}.o`, timeNs };
    });
    const cached = path.join(root, 'cached');
    const captured = await captureBuild(build, cached);
    assert.ok(captured.ok);
    const restored = path.join(root, 'restored');
    assert.deepEqual(await restoreBuild(cached, restored, captured.files, null), { ok: true });
    for (const { relative, timeNs } of files) {
      for (const copy of [path.join(cached, relative), path.join(restored, relative)]) {
        const copied = mtimeNs(copy);
        assert.ok(copied <= timeNs && timeNs - copied < 2_000n, `${copy}: ${copied} for ${timeNs}`);
      }
    }
  });
});
