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

# `kforge` on PATH: a link to bin/kforge.js, which starts in a fraction of a second (`npx kforge`
# starts npm first: 2–5 s). In /usr/local/bin where root or sudo may write (sudo asks for a
# password only on a terminal), else in ~/.local/bin. `node bin/kforge.js` runs it from the checkout without either.
target="$PWD/bin/kforge.js"
link_in() {
  local dir="$1" run=()
  if [ ! -w "$dir" ] && [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then
      run=(sudo -n)
    elif [ -t 0 ] && [ "$dir" = /usr/local/bin ]; then
      run=(sudo)
    else
      return 1
    fi
  fi
  "${run[@]}" mkdir -p "$dir" && "${run[@]}" ln -sfn "$target" "$dir/kforge"
}
linked=""
for dir in /usr/local/bin "$HOME/.local/bin"; do
  if [ "$(readlink "$dir/kforge" 2>/dev/null)" = "$target" ]; then linked="$dir"; break; fi
  previous="$(readlink "$dir/kforge" 2>/dev/null || true)"
  if link_in "$dir" 2>/dev/null; then
    linked="$dir"
    [ -z "$previous" ] || echo "kforge install: $dir/kforge pointed at $previous; it now runs this checkout" >&2
    echo "kforge install: linked $dir/kforge to $target" >&2
    break
  fi
done
if [ -z "$linked" ]; then
  echo "kforge install: could not link kforge into /usr/local/bin or ~/.local/bin; run it as node $target" >&2
elif [ "$(command -v kforge || true)" != "$linked/kforge" ]; then
  echo "kforge install: $linked is not first on PATH for kforge; add it (export PATH=\"$linked:\$PATH\"), or run node $target" >&2
fi
