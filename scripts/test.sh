#!/usr/bin/env bash
# The whole test suite: type-check, TypeScript tests, Python worker tests.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc --noEmit -p tsconfig.json
bash scripts/test-ts.sh
bash scripts/test-py.sh
