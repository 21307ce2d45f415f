import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BACKENDS } from '../core/verdict.js';
import { BACKEND_MODULES, backendChoices, backendModule, backendsRequiring, describePerBackend, runsOnHost } from './registry.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Folders of src/backends/ that hold what several backends share, not a backend. */
const SHARED_FOLDERS = ['nvidia'];
/** The files of every backend folder (CONTRIBUTING.md, "Adding a backend"). */
const BACKEND_FILES = ['build.ts', 'clock.ts', 'detect.ts', 'doctor.ts', 'index.ts', 'prompt.ts'];

function folders(): string[] {
  return readdirSync(here).filter((name) => statSync(join(here, name)).isDirectory());
}

function backendFolders(): string[] {
  return folders().filter((name) => !SHARED_FOLDERS.includes(name));
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(here, folder))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .sort();
}

describe('src/backends', () => {
  it('lists in its registry exactly its backend folders, in the order of BACKENDS', () => {
    assert.deepEqual(
      BACKEND_MODULES.map((module) => module.name),
      [...BACKENDS],
    );
    for (const name of BACKENDS) assert.equal(backendModule(name).name, name, `the module registered as ${name} is named so`);
    assert.deepEqual(backendFolders().sort(), [...BACKENDS].sort());
  });

  it('gives every backend folder the same files, each exporting the part its index assembles', () => {
    for (const folder of backendFolders()) {
      assert.deepEqual(sourceFiles(folder), BACKEND_FILES, `src/backends/${folder}/`);
      const index = readFileSync(join(here, folder, 'index.ts'), 'utf8');
      for (const file of BACKEND_FILES.filter((name) => name !== 'index.ts')) {
        assert.match(index, new RegExp(`from '\\./${file.replace('.ts', '.js')}'`), `src/backends/${folder}/index.ts imports ${file}`);
      }
    }
  });

  it("keeps each backend to its own folder, the shared folders and the interface, never another backend's", () => {
    const others = (folder: string) => folders().filter((name) => name !== folder && !SHARED_FOLDERS.includes(name));
    for (const folder of folders()) {
      for (const file of sourceFiles(folder)) {
        const text = readFileSync(join(here, folder, file), 'utf8');
        for (const match of text.matchAll(/from '(\.[^']+)'/g)) {
          const target = resolve(here, folder, match[1]!);
          const inside = target.slice(here.length + 1).split(/[\\/]/);
          assert.notEqual(inside[0], 'registry.js', `src/backends/${folder}/${file} imports the registry`);
          assert.ok(!others(folder).includes(inside[0]!), `src/backends/${folder}/${file} imports ${match[1]}`);
        }
      }
    }
  });

  it('names a module by its folder, with parts that answer for its own backend', () => {
    for (const module of BACKEND_MODULES) {
      assert.equal(module.detect.deviceName(), module.detect.kind === 'cpu' ? 'cpu' : 'cuda:0');
      assert.equal(runsOnHost(module.name), module.detect.kind === 'cpu');
      assert.ok(module.doctor.requires.includes('worker'), `${module.name} needs the worker`);
      for (const check of [...module.doctor.tools, ...module.doctor.packages]) {
        assert.ok(module.doctor.requires.includes(check.id), `${module.name} requires its own check ${check.id}`);
      }
      assert.ok(module.prompt.rules.length > 0, `${module.name} tells the model how to write a candidate`);
    }
  });

  it('words what differs per backend from the modules', () => {
    assert.equal(backendChoices(), 'cuda, triton or cpu');
    assert.equal(
      describePerBackend((module) => module.clock.defaultWarmupMs),
      '1000 on cuda and triton, 0 on cpu',
    );
    assert.deepEqual(backendsRequiring('nvcc'), ['cuda']);
    assert.deepEqual(backendsRequiring('g++'), ['cpu', 'cuda']);
    assert.deepEqual(backendsRequiring('python'), ['cpu', 'cuda', 'triton']);
  });
});
