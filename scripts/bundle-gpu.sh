#!/usr/bin/env bash
# Packs what a GPU machine without Node.js needs to run `kforge` into .gpu/ (ignored by git):
# this machine's node binary (xz) and the CLI bundled into one ES module by esbuild.
# Used with the device tool: carry .gpu, then `bash scripts/gpu-node.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
[ -f .gpu/node.tar.xz ] || tar -C "$(dirname "$(readlink -f "$(command -v node)")")" -cJf .gpu/node.tar.xz node
node_modules/.bin/esbuild src/cli/main.ts --bundle --platform=node --format=esm --target=node20 \
  --external:better-sqlite3 --outfile=.gpu/kforge.mjs --log-level=warning \
  --banner:js="import { createRequire as __kforgeRequire } from 'module'; const require = __kforgeRequire(import.meta.url);"
ls -la .gpu
