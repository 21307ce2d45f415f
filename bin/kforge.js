#!/usr/bin/env node
// Entry point: runs the compiled CLI in dist/ (`npm run build`; `npm ci` builds it through the
// `prepare` script). In a checkout, a dist/ that is missing or older than the TypeScript under
// src/ is refused with one line saying how to rebuild, so nobody runs yesterday's code by mistake;
// KFORGE_FROM_SOURCE=1 runs the sources through tsx (a development dependency) instead.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(root, 'dist', 'cli', 'main.js');
const stamp = path.join(root, 'dist', '.build-stamp');
const sources = path.join(root, 'src');

/** The newest source file under `folder` that the build compiles (tests and fixtures are not), as [mtimeMs, path]. */
function newestSource(folder) {
  let newest = [0, ''];
  for (const item of readdirSync(folder, { withFileTypes: true })) {
    const file = path.join(folder, item.name);
    if (item.isDirectory()) {
      if (item.name === 'fixtures') continue;
      const inner = newestSource(file);
      if (inner[0] > newest[0]) newest = inner;
    } else if (item.name.endsWith('.ts') && !item.name.endsWith('.test.ts')) {
      const modified = statSync(file).mtimeMs;
      if (modified > newest[0]) newest = [modified, file];
    }
  }
  return newest;
}

/** Why dist/ cannot be run, or null when it can. */
function buildProblem() {
  if (!existsSync(entry) || !existsSync(stamp)) return 'the compiled CLI (dist/) is missing';
  if (!existsSync(sources)) return null;
  const [modified, file] = newestSource(sources);
  if (modified > statSync(stamp).mtimeMs) return `the compiled CLI (dist/) is older than ${path.relative(root, file)}`;
  return null;
}

const problem = buildProblem();
if (problem === null) {
  await import(pathToFileURL(entry).href);
} else if (process.env.KFORGE_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(sources, 'cli', 'main.ts')).href);
} else {
  process.stderr.write(`kforge: ${problem}; run \`npm run build\` in ${root} (or set KFORGE_FROM_SOURCE=1 to run the TypeScript sources through tsx)\n`);
  process.exitCode = 2;
}
