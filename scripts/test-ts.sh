#!/usr/bin/env bash
# Runs the TypeScript tests (node's test runner through tsx):
#   bash scripts/test-ts.sh                      # every *.test.ts under src/, test-support/ and bench/ but the end-to-end *.e2e.test.ts, 3 files at once
#   bash scripts/test-ts.sh --all                # every *.test.ts, one file at a time (as CI runs them)
#   bash scripts/test-ts.sh src/eval             # every *.test.ts under the files/folders given, end-to-end ones included
# KFORGE_TEST_CONCURRENCY=N runs N files at once. Without it, a set with no end-to-end file runs 3
# at once (on 2 cores most of those files wait on child processes, timers or sockets), and a set
# with one runs a file at a time: the end-to-end files time real worker processes and judge stage
# limits by the clock, which a loaded host skews.
# Every file is its own process with its own temporary folders, ports and caches.
# The end-to-end tests need a Python with PyTorch (KFORGE_PYTHON, else /usr/bin/python3) and skip
# themselves, saying so, where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
roots=()
for argument in "$@"; do
  if [ "$argument" = --all ]; then all=true; else roots+=("$argument"); fi
done
list() { find "$@" -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort; }
if [ ${#roots[@]} -gt 0 ]; then
  mapfile -t files < <(list "${roots[@]}")
elif [ "$all" = true ]; then
  mapfile -t files < <(list src test-support bench)
else
  mapfile -t files < <(list src test-support bench | grep -vF '.e2e.test.ts')
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "test-ts: no *.test.ts files under ${roots[*]:-src test-support bench}" >&2
  exit 1
fi
default_concurrency=3
if printf '%s\n' "${files[@]}" | grep -qF '.e2e.test.ts'; then default_concurrency=1; fi
concurrency="${KFORGE_TEST_CONCURRENCY:-$default_concurrency}"
if ! [[ "$concurrency" =~ ^[1-9][0-9]*$ ]]; then
  echo "test-ts: expected KFORGE_TEST_CONCURRENCY to be a positive integer, got \`$concurrency\`" >&2
  exit 2
fi
# --test-force-exit: a file whose tests are done but which still holds a handle (a child's pipe, a
# timer) ends instead of hanging the whole run; --test-timeout bounds any test that sets no limit.
exec node --import tsx --test --test-force-exit --test-timeout=900000 --test-concurrency="$concurrency" "${files[@]}"
