#!/usr/bin/env bash
# Retakes the dashboard's screenshots (docs/dashboard.md) with one command: builds the CLI and the
# web app, then runs the browser test src/cli/commands/serve.e2e.test.ts with KFORGE_SCREENSHOTS,
# which starts `kforge serve` on the seeded test store (test-support/seeded-store: the cpu-demo and
# h200-demo runs, plus the test's own runs) and photographs each page at 1280×800 in Debian's
# Chromium as it walks them. Every picture is a real page served by kforge.
#   bash scripts/screenshots.sh                  # into docs/screenshots
#   bash scripts/screenshots.sh /tmp/shots       # into another folder
# Needs /usr/bin/chromium and a Python with PyTorch (the test's edit step evaluates a candidate on
# the cpu backend); fails, rather than keep old pictures, when the test did not take every one.
set -euo pipefail
cd "$(dirname "$0")/.."
folder="$(mkdir -p "${1:-docs/screenshots}" && cd "${1:-docs/screenshots}" && pwd)"
names=(runs run problem candidate-diff candidate-edited candidate-build compare-runs compare-candidates candidate-shapes empty)
[ -x /usr/bin/chromium ] || { echo "screenshots: needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)" >&2; exit 1; }
KFORGE_PYTHON="$(bash scripts/python.sh)"
export KFORGE_PYTHON

npm run build --silent
bash scripts/build-web.sh
marker="$(mktemp)"
trap 'rm -f "$marker"' EXIT
KFORGE_SCREENSHOTS="$folder" node --import tsx --test src/cli/commands/serve.e2e.test.ts
missing=()
for name in "${names[@]}"; do
  [ "$folder/$name.png" -nt "$marker" ] || missing+=("$name.png")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "screenshots: the test did not retake ${missing[*]} in $folder" >&2
  exit 1
fi
echo "screenshots: ${#names[@]} pictures of the seeded test store in $folder" >&2
