#!/usr/bin/env bash
# The Python suites, under the same interpreter the evaluator uses: the worker's and the reward
# client's (clients/python, standard library only).
#   bash scripts/test-py.sh              # the worker's suite but the tests marked e2e (worker/pytest.ini), and the client's
#   bash scripts/test-py.sh --all        # the worker's whole suite, and the client's
#   bash scripts/test-py.sh ARGS...      # the worker's pytest with ARGS (e.g. tests/test_sandbox.py -k attack), and the client's
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(bash scripts/python.sh)"
if [ $# -eq 0 ]; then
  worker_arguments=(-m 'not e2e')
elif [ "$1" = --all ]; then
  worker_arguments=("${@:2}")
else
  worker_arguments=("$@")
fi
(cd worker && "$python" -m pytest -q -p no:cacheprovider "${worker_arguments[@]}")
(cd clients/python && "$python" -m pytest -q -p no:cacheprovider tests)
