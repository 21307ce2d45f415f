#!/usr/bin/env bash
# Python lint and format check for worker/, clients/python and bench/ (recorded results excluded): flake8 (pyflakes + pycodestyle) and
# `black --check`, configured in worker/.flake8 and worker/pyproject.toml (line length 120).
# Fails on any finding. `black worker clients/python --config worker/pyproject.toml` fixes the
# formatting.
#
# Why not Ruff: CI installs only Debian 12 packages and npm packages (PyPI is unreachable there),
# and Debian 12 has no `ruff` package; its `flake8` (5.0) and `black` (23.1) are the tools it has.
# scripts/install.sh installs both.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(worker clients/python bench)
# A benchmark's recorded runs are archives (docs/benchmarks/README.md); a run unpacked to read, or the
# one run bench/handover/results keeps unpacked, stays as it was written.
excluded='/results/'
for tool in flake8 black; do
  if ! command -v "$tool" >/dev/null; then
    echo "lint-py: $tool is not installed (apt-get install flake8 black, or scripts/install.sh)" >&2
    exit 1
  fi
done
status=0
flake8 --config worker/.flake8 --extend-exclude "bench/*${excluded}" "${paths[@]}" || status=1
black --check --config worker/pyproject.toml --extend-exclude "$excluded" "${paths[@]}" || {
  echo "lint-py: black would reformat the files above (run: black --config worker/pyproject.toml --extend-exclude '$excluded' ${paths[*]})" >&2
  status=1
}
exit "$status"
