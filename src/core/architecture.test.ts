import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Which domains each domain may import from (CONTRIBUTING.md, convention 1: dependencies point one way). */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  // One folder per backend (src/backends/registry.ts): what the domains above decide per backend.
  backends: ['backends', 'core'],
  eval: ['eval', 'backends', 'core'],
  llm: ['llm', 'core'],
  store: ['store', 'core'],
  queue: ['queue', 'eval', 'backends', 'core'],
  agent: ['agent', 'queue', 'eval', 'backends', 'llm', 'store', 'core'],
  server: ['server', 'agent', 'queue', 'eval', 'backends', 'llm', 'store', 'core'],
  cli: ['cli', 'server', 'agent', 'queue', 'eval', 'backends', 'llm', 'store', 'core'],
};

/**
 * Rooms inside a domain (its subfolders, and `.` for the files at its top) and the rooms of the same
 * domain each may import from: convention 1 at the room level, so that no arrow runs back up. A room
 * missing here fails the test, so a new room states its place. The top of `eval` holds the
 * `Evaluator` interface with its events and errors and imports no room: an interface never depends
 * on an implementation's types.
 */
const ROOMS: Record<string, Record<string, readonly string[]>> = {
  eval: {
    '.': [],
    locks: ['.'],
    devices: ['.'],
    process: ['.'],
    timing: ['.', 'process'],
    cache: ['.', 'locks', 'process'],
    problem: ['.', 'locks', 'process'],
    run: ['.', 'locks', 'process', 'timing', 'cache', 'problem'],
    'warm-workers': ['.', 'process', 'run'],
    pipeline: ['.', 'locks', 'devices', 'process', 'cache', 'problem', 'run', 'warm-workers'],
  },
  // The command line: `io` at the bottom, one room per concern above it, the commands above them,
  // and at the top the program (`main.ts`, its command catalog).
  cli: {
    io: [],
    flags: ['io'],
    rendering: ['io'],
    doctor: ['io'],
    evaluator: ['io'],
    sizing: ['io', 'flags'],
    batch: ['io', 'rendering'],
    commands: ['io', 'flags', 'rendering', 'doctor', 'evaluator', 'sizing', 'batch'],
    '.': ['io', 'doctor', 'commands'],
  },
};

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const pattern = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  const found: string[] = [];
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] ?? match[2];
    if (specifier) found.push(resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
  }
  return found;
}

function domainOf(file: string): string {
  return relative(sourceRoot, file).split(/[\\/]/)[0] ?? '';
}

/** A file's room inside its domain: the first folder below the domain, or `.` for a file at its top. */
function roomOf(file: string): string {
  const parts = relative(sourceRoot, file).split(/[\\/]/);
  return parts.length > 2 ? (parts[1] ?? '.') : '.';
}

const files = sourceFiles(sourceRoot);
const graph = new Map(files.map((file) => [file, relativeImports(file)]));

test('every domain imports only the domains below it', () => {
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    const from = domainOf(file);
    const allowed = ALLOWED[from];
    if (!allowed) {
      violations.push(`${relative(sourceRoot, file)} is in an unknown domain '${from}'`);
      continue;
    }
    for (const target of imports) {
      const to = domainOf(target);
      if (!allowed.includes(to)) violations.push(`${relative(sourceRoot, file)} imports ${relative(sourceRoot, target)}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('every room imports only the rooms below it in its domain', () => {
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    const rooms = ROOMS[domainOf(file)];
    if (!rooms) continue;
    const from = roomOf(file);
    const allowed = rooms[from];
    if (!allowed) {
      violations.push(`${relative(sourceRoot, file)} is in a room '${from}' that ROOMS does not place`);
      continue;
    }
    for (const target of imports) {
      if (domainOf(target) !== domainOf(file)) continue;
      const to = roomOf(target);
      if (to !== from && !allowed.includes(to)) violations.push(`${relative(sourceRoot, file)} imports ${relative(sourceRoot, target)}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('the rooms of a domain are placed in one order, without a cycle', () => {
  for (const [domain, rooms] of Object.entries(ROOMS)) {
    const placed: string[] = [];
    let remaining = Object.keys(rooms);
    while (remaining.length > 0) {
      const ready = remaining.filter((room) => (rooms[room] ?? []).every((below) => placed.includes(below)));
      assert.ok(ready.length > 0, `the rooms of ${domain} import each other in a circle: ${remaining.join(', ')}`);
      placed.push(...ready);
      remaining = remaining.filter((room) => !ready.includes(room));
    }
  }
});

test('there are no import cycles', () => {
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'visiting');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (state.get(target) === 'visiting') {
        const cycle = stack.slice(stack.indexOf(target)).concat(target);
        cycles.push(cycle.map((path) => relative(sourceRoot, path)).join(' -> '));
      } else if (!state.has(target)) {
        visit(target);
      }
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  assert.deepEqual(cycles, []);
});

test('src/ holds the product and its tests: test code elsewhere lives in test-support/', () => {
  const testCode = files.filter((file) => /from\s+['"](?:node:test|[^'"]*test-support\/)/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(
    testCode.map((file) => relative(sourceRoot, file)),
    [],
    'fakes, fixtures and conformance suites belong in test-support/ (CONTRIBUTING.md, convention 10)',
  );
});

test('the checker sees the source tree', () => {
  assert.ok(files.some((file) => file.endsWith(join('core', 'verdict.ts'))));
});
