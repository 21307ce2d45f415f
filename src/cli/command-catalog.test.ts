import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { REPOSITORY_ROOT, TEST_PYTHON } from '../../test-support/fixture-paths.js';
import { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './commands/command-descriptions.js';
import { commandNamed, commandRegistrations, COMMAND_LOADERS } from './command-catalog.js';
import { runProgram } from './run-program.js';

test('the command an invocation runs is its first argument, or the one after help', () => {
  assert.equal(commandNamed(['eval', 'p.py', 'c.py']), 'eval');
  assert.equal(commandNamed(['help', 'optimize']), 'optimize');
  assert.equal(commandNamed(['--help']), null);
  assert.equal(commandNamed(['--version']), null);
  assert.equal(commandNamed(['evaluate']), null);
});

test('`kforge --help` lists every command by its description without loading one; a named command is loaded in full', async () => {
  const listed = new Command();
  for (const register of await commandRegistrations(['--help'])) register(listed);
  assert.deepEqual(
    listed.commands.map((command) => command.name()),
    Object.keys(COMMAND_DESCRIPTIONS),
  );
  assert.ok(
    listed.commands.every((command) => command.options.length === 0),
    'listed commands carry no options: their modules were not loaded',
  );
  const loaded = new Command();
  for (const register of await commandRegistrations(['eval', '--help'])) register(loaded);
  const evaluation = loaded.commands.find((command) => command.name() === 'eval')!;
  assert.ok(evaluation.options.some((option) => option.long === '--backend'));
  assert.equal(evaluation.description(), COMMAND_DESCRIPTIONS.eval);
});

test('every loader registers the command it is named after, with the shared description', async () => {
  for (const [name, load] of Object.entries(COMMAND_LOADERS)) {
    const program = new Command();
    (await load())(program);
    const command = program.commands.find((entry) => entry.name() === name);
    assert.ok(command, `${name} registers a command of its name`);
    assert.equal(command.description(), COMMAND_DESCRIPTIONS[name as keyof typeof COMMAND_DESCRIPTIONS]);
  }
});

test('--version prints kforge, Node.js, Python, PyTorch and CUDA lines', async () => {
  const out: string[] = [];
  const status = await runProgram(['--version'], await commandRegistrations(['--version']), {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: () => true },
    environment: { ...process.env, KFORGE_PYTHON: process.env.KFORGE_PYTHON ?? 'python3' },
  });
  assert.equal(status, 0);
  const lines = out.join('').trim().split('\n');
  assert.match(lines[0]!, /^kforge \d+\.\d+\.\d+/);
  assert.equal(lines[1], `Node.js ${process.versions.node}`);
  assert.match(lines[2]!, /^Python \d+\.\d+/);
  assert.match(lines[3]!, /^PyTorch \d/);
  // Debian's PyTorch 1.13 has no torch.compile (hence "vs compile —"); the line says so.
  if (Number(/^PyTorch (\d+)/.exec(lines[3]!)?.[1]) < 2) assert.match(lines[3]!, /no torch\.compile/);
  assert.match(lines[4]!, /^CUDA: /);
});

test('--version with a Python that does not run says so in one line', async () => {
  const out: string[] = [];
  await runProgram(['--version'], [], {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: () => true },
    environment: { ...process.env, KFORGE_PYTHON: '/nonexistent/python3' },
  });
  assert.match(out.join(''), /Python: `\/nonexistent\/python3` did not run; set KFORGE_PYTHON/);
});

test('kforge --version reads PyTorch without importing it', async () => {
  // A torch whose import would leave a mark and fail: --version must read its files, not run it.
  const root = mkdtempSync(path.join(tmpdir(), 'kforge-version-'));
  try {
    const torch = path.join(root, 'site', 'torch');
    mkdirSync(torch, { recursive: true });
    const marker = path.join(root, 'imported');
    writeFileSync(path.join(torch, '__init__.py'), `open(${JSON.stringify(marker)}, "w").close()\nraise ImportError("--version imported torch")\n`);
    writeFileSync(path.join(torch, 'version.py'), "from typing import Optional\n__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\n");
    const result = await execa(process.execPath, [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), '--version'], {
      reject: false,
      env: { KFORGE_PYTHON: TEST_PYTHON, PYTHONPATH: path.join(root, 'site') },
    });
    assert.equal(result.exitCode, 0, String(result.stderr));
    const lines = String(result.stdout).trim().split('\n');
    assert.equal(lines[3], 'PyTorch 2.5.1+cu124', 'a 2.x version: no note about torch.compile');
    assert.match(lines[4]!, /^CUDA: PyTorch built with CUDA 12\.4; /);
    assert.equal(existsSync(marker), false, 'torch was imported');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
