import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Which domains each domain may import from (CONTRIBUTING.md, convention 1: dependencies point one way). */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  eval: ['eval', 'core'],
  llm: ['llm', 'core'],
  store: ['store', 'core'],
  queue: ['queue', 'eval', 'core'],
  agent: ['agent', 'queue', 'eval', 'llm', 'store', 'core'],
  server: ['server', 'agent', 'queue', 'eval', 'llm', 'store', 'core'],
  cli: ['cli', 'server', 'agent', 'queue', 'eval', 'llm', 'store', 'core'],
};

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    // Conformance suites (`*-conformance.ts`) are test code that tests share: they may use test-support.
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('-conformance.ts') ? [path] : [];
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

test('the checker sees the source tree', () => {
  assert.ok(files.some((file) => file.endsWith(join('core', 'verdict.ts'))));
});
