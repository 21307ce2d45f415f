#!/usr/bin/env bash
# The Python worker's pytest suite, under the same interpreter the evaluator uses.
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(bash scripts/python.sh)"
cd worker
"$python" -m pytest -q -p no:cacheprovider "$@"
