#!/usr/bin/env bash
# GPU tests: run on a machine with an NVIDIA GPU (they skip themselves elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
export KFORGE_GPU_TESTS=1
"${KFORGE_PYTHON:-python3}" -m pytest -q -p no:cacheprovider worker/tests -m gpu "$@"
