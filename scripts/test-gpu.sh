#!/usr/bin/env bash
# GPU tests: run on a machine with an NVIDIA GPU (they skip themselves elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(bash scripts/python.sh)"
cd worker
"$python" -m pytest -q -p no:cacheprovider -m gpu "$@"
