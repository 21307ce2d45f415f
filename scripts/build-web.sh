#!/usr/bin/env bash
# Builds the dashboard's web app (web/, Vite + React) into web/dist, which `kforge serve` serves.
# Run once after `npm ci` (the install script calls it) and after changing anything under web/.
#   bash scripts/build-web.sh            # build
#   bash scripts/build-web.sh --check    # type-check the web app, then build
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--check" ]; then
  npx tsc --noEmit -p web/tsconfig.json
fi
npx vite build --config web/vite.config.ts --logLevel warn
echo "build-web: web app built into web/dist" >&2
