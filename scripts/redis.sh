#!/usr/bin/env bash
# A Redis for kforge workers on this machine, for development: `scripts/redis.sh [start|stop|status] [PORT]`.
# start (the default) runs redis-server daemonized on 127.0.0.1:PORT (default 6379) with its data,
# log and pid file under .kforge/redis/PORT (append-only file on, so a restart keeps the queue) and
# prints the URL to pass as --redis. kforge itself never starts a Redis. Production: run Redis as a
# service of its own (Debian: apt-get install redis-server; systemctl enable --now redis-server).
set -euo pipefail

action="${1:-start}"
port="${2:-${KFORGE_REDIS_PORT:-6379}}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${KFORGE_REDIS_DIR:-$root/.kforge/redis/$port}"
server="${KFORGE_REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}"
pidfile="$data/redis.pid"
url="redis://127.0.0.1:$port"

case "$port" in
  ''|*[!0-9]*) echo "scripts/redis.sh: expected the port to be a number, got \`$port\`" >&2; exit 2 ;;
esac

running() {
  [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

case "$action" in
  start)
    if [[ ! -x "$server" ]]; then
      echo "scripts/redis.sh: no redis-server found (Debian: apt-get install redis-server, or set KFORGE_REDIS_SERVER)" >&2
      exit 2
    fi
    if running; then
      echo "scripts/redis.sh: already running (pid $(cat "$pidfile"))" >&2
      echo "$url"
      exit 0
    fi
    mkdir -p "$data"
    "$server" --port "$port" --bind 127.0.0.1 --dir "$data" --daemonize yes --pidfile "$pidfile" \
      --logfile "$data/redis.log" --appendonly yes --appendfsync everysec --save ''
    for _ in $(seq 1 50); do
      running && break
      sleep 0.1
    done
    if ! running; then
      echo "scripts/redis.sh: redis-server did not start; see $data/redis.log" >&2
      exit 1
    fi
    echo "scripts/redis.sh: redis-server pid $(cat "$pidfile"), data in $data" >&2
    echo "$url"
    ;;
  stop)
    if ! running; then
      echo "scripts/redis.sh: not running on port $port" >&2
      exit 0
    fi
    pid="$(cat "$pidfile")"
    kill -TERM "$pid"
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    echo "scripts/redis.sh: stopped (data kept in $data)" >&2
    ;;
  status)
    if running; then
      echo "$url (pid $(cat "$pidfile"), data in $data)"
    else
      echo "scripts/redis.sh: not running on port $port" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: scripts/redis.sh [start|stop|status] [PORT]" >&2
    exit 2
    ;;
esac
