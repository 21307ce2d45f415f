#!/usr/bin/env bash
# Runs the TypeScript tests (node's test runner through tsx): every *.test.ts under src/,
# test-support/ and bench/, or only the files/folders given as arguments.
#   bash scripts/test-ts.sh                      # everything
#   bash scripts/test-ts.sh src/eval             # one folder
# The end-to-end tests need a Python with PyTorch (KFORGE_PYTHON, else /usr/bin/python3) and skip
# themselves, saying so, where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
roots=("$@")
[ ${#roots[@]} -gt 0 ] || roots=(src test-support bench)
mapfile -t files < <(find "${roots[@]}" -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "test-ts: no *.test.ts files under ${roots[*]}" >&2
  exit 1
fi
# --test-force-exit: a file whose tests are done but which still holds a handle (a child's pipe, a
# timer) ends instead of hanging the whole run; --test-timeout bounds any test that sets no limit.
exec node --import tsx --test --test-force-exit --test-timeout=900000 "${files[@]}"
