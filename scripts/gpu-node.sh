#!/usr/bin/env bash
# On a GPU machine: puts node on PATH (unpacking the carried one if the machine has none) and a
# `kforge` command that runs the bundled CLI against this checkout. Source it: `. scripts/gpu-node.sh`.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v node >/dev/null 2>&1; then
  mkdir -p /tmp/kforge-node && tar -C /tmp/kforge-node -xJf "$root/.gpu/node.tar.xz"
  export PATH="/tmp/kforge-node:$PATH"
fi
export KFORGE_ROOT="$root"
export KFORGE_WORKER_DIR="$root/worker"
export KFORGE_CLI="$root/.gpu/bin/kforge.mjs"
# A `kforge` on PATH too (a shell function is not seen by `timeout`, xargs or Python's subprocess).
mkdir -p /tmp/kforge-bin
printf '#!/usr/bin/env bash\nexec node "%s" "$@"\n' "$KFORGE_CLI" > /tmp/kforge-bin/kforge
chmod +x /tmp/kforge-bin/kforge
export PATH="/tmp/kforge-bin:$PATH"
