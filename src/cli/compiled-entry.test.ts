import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { execa } from 'execa';
import { REPOSITORY_ROOT } from '../core/repository-paths.js';

/** bin/kforge.js in a checkout of its own: dist/ with a stand-in CLI that says it ran, src/ with one source file. */
const checkout = mkdtempSync(path.join(tmpdir(), 'kforge-bin-'));
after(() => rmSync(checkout, { recursive: true, force: true }));
mkdirSync(path.join(checkout, 'bin'));
copyFileSync(path.join(REPOSITORY_ROOT, 'bin', 'kforge.js'), path.join(checkout, 'bin', 'kforge.js'));
writeFileSync(path.join(checkout, 'package.json'), '{"type":"module"}\n');
mkdirSync(path.join(checkout, 'src', 'cli', 'fixtures'), { recursive: true });
const source = path.join(checkout, 'src', 'cli', 'main.ts');

const run = () => execa(process.execPath, [path.join(checkout, 'bin', 'kforge.js'), '--help'], { reject: false, env: { KFORGE_FROM_SOURCE: '' } });
const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);

test('without dist/ it says how to build, in one line, and exits 2', async () => {
  writeFileSync(source, 'export {};\n');
  const result = await run();
  assert.equal(result.exitCode, 2);
  assert.match(
    result.stderr,
    /^kforge: the compiled CLI \(dist\/\) is missing; run `npm run build` in .+ \(or set KFORGE_FROM_SOURCE=1 to run the TypeScript sources through tsx\)$/,
  );
});

test('a dist/ older than a source file is refused, naming the file; a fresh one runs; tests and fixtures do not count', async () => {
  mkdirSync(path.join(checkout, 'dist', 'cli'), { recursive: true });
  writeFileSync(path.join(checkout, 'dist', 'cli', 'main.js'), "process.stdout.write('compiled CLI ran\\n');\n");
  const stamp = path.join(checkout, 'dist', '.build-stamp');
  writeFileSync(stamp, '');
  at(stamp, 1_000_000);
  at(source, 2_000_000);
  const stale = await run();
  assert.equal(stale.exitCode, 2);
  assert.match(stale.stderr, /is older than src\/cli\/main\.ts; run `npm run build`/);
  at(source, 500_000);
  writeFileSync(path.join(checkout, 'src', 'cli', 'main.test.ts'), '');
  writeFileSync(path.join(checkout, 'src', 'cli', 'fixtures', 'helper.ts'), '');
  const fresh = await run();
  assert.equal(fresh.exitCode, 0, fresh.stderr);
  assert.equal(fresh.stdout, 'compiled CLI ran');
});
