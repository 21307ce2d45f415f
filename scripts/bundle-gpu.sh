#!/usr/bin/env bash
# Packs what a GPU machine without Node.js needs to run `kforge` into .gpu/ (ignored by git): this
# machine's node binary (xz), the CLI and the benchmarks bundled into ES modules by esbuild under
# .gpu/bin/ (two folders below the checkout, as src/core/repository-paths.ts expects), and the one
# native package they keep external (better-sqlite3, built here for this node) under .gpu/node_modules.
# Used with the device tool: carry .gpu, then `. scripts/gpu-node.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu/bin
[ -f .gpu/node.tar.xz ] || tar -C "$(dirname "$(readlink -f "$(command -v node)")")" -cJf .gpu/node.tar.xz node
bundle() {  # bundle ENTRY.ts OUT.mjs
  node_modules/.bin/esbuild "$1" --bundle --platform=node --format=esm --target=node20 \
    --external:better-sqlite3 --outfile="$2" --log-level=warning \
    --banner:js="import { createRequire as __kforgeRequire } from 'module'; const require = __kforgeRequire(import.meta.url);"
}
bundle src/cli/main.ts .gpu/bin/kforge.mjs
bundle bench/throughput/run.ts .gpu/bin/throughput.mjs
bundle bench/reward/run.ts .gpu/bin/reward.mjs
bundle bench/optimize/run.ts .gpu/bin/optimize.mjs
rm -f .gpu/kforge.mjs
modules=.gpu/node_modules
rm -rf "$modules" && mkdir -p "$modules/better-sqlite3/build/Release"
cp -r node_modules/better-sqlite3/package.json node_modules/better-sqlite3/lib "$modules/better-sqlite3/"
cp node_modules/better-sqlite3/build/Release/better_sqlite3.node "$modules/better-sqlite3/build/Release/"
for dependency in bindings file-uri-to-path; do cp -r "node_modules/$dependency" "$modules/"; done
du -sh .gpu
