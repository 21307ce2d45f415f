#!/usr/bin/env bash
# The Python worker's pytest suite, under the same interpreter the evaluator uses.
set -euo pipefail
cd "$(dirname "$0")/../worker"
"${KFORGE_PYTHON:-python3}" -m pytest -q -p no:cacheprovider "$@"
