#!/usr/bin/env bash
# Installs everything kforge needs on Debian 12 with Node.js 20: the Debian packages of the
# Python worker's CPU backend (and the services the tests start), then the npm packages.
# Idempotent: packages already present are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

# flake8 and black: scripts/lint-py.sh (the Python lint; Debian 12 has no ruff).
debian_packages=(python3 python3-torch libtorch-dev pybind11-dev python3-numpy python3-pytest python3-dev ninja-build g++ redis-server chromium flake8 black)
missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_prefix=()
  [ "$(id -u)" -eq 0 ] || sudo_prefix=(sudo)
  echo "kforge install: apt-get install ${missing[*]}" >&2
  "${sudo_prefix[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo_prefix[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm ci also compiles the CLI into dist/ (the `prepare` script: npm run build).
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi

# The dashboard that `kforge serve` serves, built once here (web/dist is not in git).
bash scripts/build-web.sh
