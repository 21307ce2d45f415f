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
 * Rooms inside a domain (its subfolders, a nested folder where it is named, and `.` for the files at
 * its top) and the rooms of the same domain each may import from: convention 1 at the room level,
 * so that no arrow runs back up. A room missing here fails the test, so a new room states its place.
 * Where a domain has an interface with implementations, the interface's room sits below them and
 * imports none of them (the top of `eval`, `llm` and `store`; `search/strategies` below `run`).
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
  // Models: the `KernelModel` interface and its errors at the top import no room; a new provider
  // is a file in `providers/`, which may use reply extraction and usage (prices, call limits).
  llm: {
    '.': [],
    replies: [],
    usage: ['.'],
    providers: ['.', 'replies', 'usage'],
  },
  // The run store: the `RunStore` interface and its records at the top, with the store's errors
  // below them; the SQLite implementation (and opening it) above, with its migrations.
  store: {
    errors: [],
    '.': ['errors'],
    migrations: [],
    sqlite: ['.', 'errors', 'migrations'],
  },
  // `kforge optimize`: the search in four rooms (what a search counts and says; which candidate is
  // best; what the model is asked; the strategies behind `SearchStrategy`), the run report and the
  // export beside it, and at the top the run that drives them.
  agent: {
    'search/state': [],
    'search/selection': ['search/state'],
    'search/prompts': ['search/state', 'search/selection'],
    'search/strategies': ['search/state', 'search/selection', 'search/prompts'],
    report: ['search/state', 'search/selection'],
    export: [],
    run: ['search/state', 'search/selection', 'search/prompts', 'search/strategies', 'report'],
  },
  // `kforge serve`: schemas and HTTP errors at the bottom, then views, reports, live streams, the
  // reward API and actions; the routes (with the context each is handed) above them, and at the top
  // the server's assembly (`create-server.ts`, the web app, the API's types for the dashboard).
  server: {
    'api-schemas': [],
    http: [],
    views: ['api-schemas'],
    report: ['api-schemas', 'views'],
    streams: [],
    reward: ['api-schemas', 'http'],
    actions: ['http', 'views'],
    routes: ['api-schemas', 'http', 'views', 'report', 'streams', 'reward', 'actions'],
    '.': ['api-schemas', 'http', 'views', 'report', 'streams', 'reward', 'actions', 'routes'],
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

/**
 * A file's room inside its domain: the longest room of `rooms` whose folder holds it, else the
 * first folder below the domain, or `.` for a file at its top.
 */
function roomOf(file: string, rooms: Record<string, readonly string[]>): string {
  const parts = relative(sourceRoot, file).split(/[\\/]/).slice(1);
  const inDomain = parts.join('/');
  const named = Object.keys(rooms).filter((room) => room !== '.' && inDomain.startsWith(`${room}/`));
  const longest = named.sort((a, b) => b.length - a.length)[0];
  if (longest) return longest;
  return parts.length > 1 ? (parts[0] ?? '.') : '.';
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
    const from = roomOf(file, rooms);
    const allowed = rooms[from];
    if (!allowed) {
      violations.push(`${relative(sourceRoot, file)} is in a room '${from}' that ROOMS does not place`);
      continue;
    }
    for (const target of imports) {
      if (domainOf(target) !== domainOf(file)) continue;
      const to = roomOf(target, rooms);
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

/** Names of the interfaces that some class implements, in `src/` and `test-support/` (convention 2). */
function implementedInterfaces(): Set<string> {
  const support = sourceFiles(resolve(sourceRoot, '..', 'test-support'));
  const names = new Set<string>();
  for (const file of [...files, ...support]) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\bclass\s+\w+[^{]*?\bimplements\s+([^{]+)\{/g)) {
      for (const name of (match[1] ?? '').split(',')) names.add(name.replace(/<.*$/s, '').trim().split('.').pop() ?? '');
    }
  }
  return names;
}

/** The names a file imports from each relative module (`import { a, type B as C } from './x.js'` gives a, B). */
function importedNames(file: string): { target: string; name: string }[] {
  const text = readFileSync(file, 'utf8');
  const found: { target: string; name: string }[] = [];
  for (const match of text.matchAll(/(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s+['"](\.[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), match[2] ?? '').replace(/\.js$/, '.ts');
    for (const part of (match[1] ?? '').split(',')) {
      const name =
        part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0] ?? '';
      if (name) found.push({ target, name });
    }
  }
  return found;
}

/** The classes a file exports that are not errors: an implementation's types. */
function implementationClasses(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const classes = [...text.matchAll(/export\s+(?:abstract\s+)?class\s+(\w+)([^{]*)\{/g)];
  return new Set(classes.filter((match) => !/extends\s+\w*Error\b/.test(match[2] ?? '')).map((match) => match[1] ?? ''));
}

test('an interface with implementations imports no implementation class (convention 2)', () => {
  const interfaces = implementedInterfaces();
  const declaring = files.filter((file) =>
    [...readFileSync(file, 'utf8').matchAll(/export\s+interface\s+(\w+)/g)].some((match) => interfaces.has(match[1] ?? '')),
  );
  assert.ok(
    declaring.some((file) => file.endsWith(join('llm', 'kernel-model.ts'))),
    'the checker finds the interfaces',
  );
  const violations = declaring.flatMap((file) =>
    importedNames(file)
      .filter(({ target, name }) => graph.has(target) && implementationClasses(target).has(name))
      .map(({ target, name }) => `${relative(sourceRoot, file)} imports the class ${name} of ${relative(sourceRoot, target)}`),
  );
  assert.deepEqual(violations, []);
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
