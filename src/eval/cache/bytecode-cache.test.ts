import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { prepareBytecodeCache } from './bytecode-cache.js';

const PYTHON = process.env.KFORGE_PYTHON ?? '/usr/bin/python3';
const root = mkdtempSync(path.join(os.tmpdir(), 'kforge-bytecode-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A worker folder holding kforge_worker and `probepkg`, a package installed without bytecode. */
function workerFolderWithProbe(name: string): string {
  const folder = path.join(root, name);
  mkdirSync(path.join(folder, 'probepkg'), { recursive: true });
  symlinkSync(path.join(WORKER_DIRECTORY, 'kforge_worker'), path.join(folder, 'kforge_worker'));
  writeFileSync(path.join(folder, 'probepkg', '__init__.py'), 'VALUE = 42\n');
  return folder;
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

describe('prepareBytecodeCache', () => {
  it('primes a cache for a package without bytecode and reuses it on the next call', async () => {
    const workerDirectory = workerFolderWithProbe('probe');
    // The cache root does not exist yet, as on a fresh machine.
    const directory = path.join(root, 'fresh-root', 'probe-cache');
    const options = { python: PYTHON, workerDirectory, directory, environment: process.env, modules: ['probepkg'] };
    assert.equal(await prepareBytecodeCache(options), directory);
    assert.ok(
      filesUnder(directory).some((name) => /^__init__\.cpython-\d+\.pyc$/.test(name)),
      'the probe package has bytecode in the cache',
    );
    assert.ok(!existsSync(path.join(workerDirectory, 'probepkg', '__pycache__')), 'nothing is written beside the sources');
    assert.equal(await prepareBytecodeCache(options), directory);
  });

  it('is off when KFORGE_BYTECODE_CACHE=0, without running Python', async () => {
    const directory = path.join(root, 'off-cache');
    const prefix = await prepareBytecodeCache({
      python: path.join(root, 'no-such-python'),
      workerDirectory: WORKER_DIRECTORY,
      directory,
      environment: { ...process.env, KFORGE_BYTECODE_CACHE: '0' },
    });
    assert.equal(prefix, null);
    assert.ok(!existsSync(`${directory}.lock`));
  });

  it('answers null, logged at info level (it costs only start-up time), when priming fails', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const prefix = await prepareBytecodeCache({
      python: path.join(root, 'no-such-python'),
      workerDirectory: WORKER_DIRECTORY,
      directory: path.join(root, 'failed-cache'),
      environment: process.env,
      logger,
    });
    assert.equal(prefix, null);
    assert.ok(
      lines.some((line) => line.includes('priming failed') && JSON.parse(line).level === 30),
      lines.join('\n'),
    );
  });
});
