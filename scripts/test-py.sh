#!/usr/bin/env bash
# The Python suites, under the same interpreter the evaluator uses: the worker's (arguments go to
# its pytest) and the reward client's (clients/python, standard library only).
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(bash scripts/python.sh)"
(cd worker && "$python" -m pytest -q -p no:cacheprovider "$@")
(cd clients/python && "$python" -m pytest -q -p no:cacheprovider tests)
