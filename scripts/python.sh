#!/usr/bin/env bash
# Prints the Python interpreter kforge's worker runs under: $KFORGE_PYTHON if set, else the first of
# `python3` on PATH and /usr/bin/python3 that can import torch. Exits 1 when none can.
set -u
has_torch() { "$1" -c 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") else 1)' >/dev/null 2>&1; }
if [ -n "${KFORGE_PYTHON:-}" ]; then echo "$KFORGE_PYTHON"; exit 0; fi
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && has_torch "$candidate"; then command -v "$candidate"; exit 0; fi
done
echo "kforge: no Python with PyTorch found (tried python3 and /usr/bin/python3); run 'npm run setup' or set KFORGE_PYTHON" >&2
exit 1
