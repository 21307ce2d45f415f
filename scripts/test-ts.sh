#!/usr/bin/env bash
# Runs the TypeScript tests (node's test runner through tsx), several files at once:
#   bash scripts/test-ts.sh                      # every *.test.ts under src/, test-support/ and bench/ but the end-to-end *.e2e.test.ts
#   bash scripts/test-ts.sh --all                # every *.test.ts, the end-to-end files first
#   bash scripts/test-ts.sh src/eval             # every *.test.ts under the files/folders given, end-to-end ones included
# KFORGE_TEST_CONCURRENCY=N runs N files at once (default 3: on 2 cores most files wait on child
# processes, timers or sockets; KFORGE_TEST_CONCURRENCY=1 runs them one after another). Every file
# is its own process with its own temporary folders, ports and caches.
# The end-to-end tests need a Python with PyTorch (KFORGE_PYTHON, else /usr/bin/python3) and skip
# themselves, saying so, where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
roots=()
for argument in "$@"; do
  if [ "$argument" = --all ]; then all=true; else roots+=("$argument"); fi
done
concurrency="${KFORGE_TEST_CONCURRENCY:-3}"
if ! [[ "$concurrency" =~ ^[1-9][0-9]*$ ]]; then
  echo "test-ts: expected KFORGE_TEST_CONCURRENCY to be a positive integer, got \`$concurrency\`" >&2
  exit 2
fi
list() { find "$@" -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort; }
if [ ${#roots[@]} -gt 0 ]; then
  mapfile -t files < <(list "${roots[@]}")
elif [ "$all" = true ]; then
  # The end-to-end files first: they are the longest, so the short ones fill in around them
  # instead of one of them running alone at the end.
  mapfile -t files < <(list src test-support bench | grep -F '.e2e.test.ts'; list src test-support bench | grep -vF '.e2e.test.ts')
else
  mapfile -t files < <(list src test-support bench | grep -vF '.e2e.test.ts')
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "test-ts: no *.test.ts files under ${roots[*]:-src test-support bench}" >&2
  exit 1
fi
# --test-force-exit: a file whose tests are done but which still holds a handle (a child's pipe, a
# timer) ends instead of hanging the whole run; --test-timeout bounds any test that sets no limit.
exec node --import tsx --test --test-force-exit --test-timeout=900000 --test-concurrency="$concurrency" "${files[@]}"
