#!/usr/bin/env bash
# The whole test suite: type-check, lint (Biome, biome.jsonc; an error or a warning fails), build (the
# tests that spawn `kforge` run the compiled CLI in dist/), TypeScript tests, Python worker tests. The end-to-end tests
# need a Python with PyTorch; this script finds it (scripts/python.sh) and fails if there is none,
# so that no end-to-end test is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."
KFORGE_PYTHON="$(bash scripts/python.sh)"
export KFORGE_PYTHON
echo "kforge tests: worker Python is $KFORGE_PYTHON" >&2
npx tsc --noEmit -p tsconfig.json
npx biome check --error-on-warnings .   # lint and format (biome.jsonc)
bash scripts/lint-py.sh                 # flake8 and black --check
npm run --silent build
bash scripts/test-ts.sh
bash scripts/test-py.sh
