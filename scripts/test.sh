#!/usr/bin/env bash
# The test command, `npm test`: type-check, lint (Biome, biome.jsonc; an error or a warning fails;
# flake8 and black), build (the tests that spawn `kforge` run the compiled CLI in dist/), then the
# tests: the quick set runs the TypeScript tests and the Python suites side by side (the Python
# output is printed when both end); everything runs one suite, and one TypeScript file, at a time.
#   npm test                 # the quick set: every test but the end-to-end ones
#   npm test -- --all        # everything, as CI runs it; also where CI is set (.ci/run sets it)
# The end-to-end tests are the TypeScript files *.e2e.test.ts and the worker's tests marked e2e
# (worker/pytest.ini). They need a Python with PyTorch; this script finds it (scripts/python.sh)
# and fails if there is none, so that no end-to-end test is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."
set_name=quick
case "${CI:-}" in '' | 0 | false) ;; *) set_name=all ;; esac
for argument in "$@"; do
  case "$argument" in
    --all) set_name=all ;;
    --quick) set_name=quick ;;
    *)
      echo "kforge tests: expected --all or --quick, got \`$argument\`" >&2
      exit 2
      ;;
  esac
done
KFORGE_PYTHON="$(bash scripts/python.sh)"
export KFORGE_PYTHON
echo "kforge tests: worker Python is $KFORGE_PYTHON" >&2
if [ "$set_name" = all ]; then
  echo "kforge tests: every test, the end-to-end ones included, one suite after the other" >&2
else
  echo "kforge tests: the quick set, without the end-to-end tests (npm test -- --all, or CI=1, runs them too)" >&2
fi
npx tsc --noEmit -p tsconfig.json
npx biome check --error-on-warnings . # lint and format (biome.jsonc)
bash scripts/lint-py.sh               # flake8 and black --check
npm run --silent build

if [ "$set_name" = all ]; then
  # Everything, one suite after the other, as CI runs it: the end-to-end tests judge stage limits
  # and timings by the clock, so they get the host to themselves.
  bash scripts/test-ts.sh --all
  bash scripts/test-py.sh --all
  exit 0
fi

# The quick set: the Python suites beside the TypeScript files. They run in their own session, so
# that a Ctrl-C here (which a background job would ignore) or a failure ends them and every process
# they started.
python_log="$(mktemp "${TMPDIR:-/tmp}/kforge-test-py.XXXXXX")"
setsid --wait bash scripts/test-py.sh >"$python_log" 2>&1 &
python_group=$!
stop_python() { kill -TERM -- "-$python_group" 2>/dev/null || true; }
trap 'stop_python; rm -f "$python_log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

typescript_status=0
bash scripts/test-ts.sh || typescript_status=$?
typescript_seconds=$SECONDS
python_status=0
wait "$python_group" || python_status=$?
python_seconds=$SECONDS
echo "── Python suites (bash scripts/test-py.sh) ──"
cat "$python_log"
echo "kforge tests: TypeScript exit status $typescript_status at ${typescript_seconds} s, Python exit status $python_status by ${python_seconds} s" >&2
[ "$typescript_status" -eq 0 ] && [ "$python_status" -eq 0 ]
