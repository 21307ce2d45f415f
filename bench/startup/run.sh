#!/usr/bin/env bash
# Start-up time of the kforge command: runs each command line RUNS times (default 20) after two
# untimed warm-up runs, hyperfine-style, and prints min, median, mean and max wall time in
# seconds. The target of issue 20 is `kforge --help` under 0.4 s on the 2-core development
# machine; docs/benchmarks/startup.md keeps the measured figures.
#   bash bench/startup/run.sh                 # --help, --version, eval --help, optimize --help
#   RUNS=50 bash bench/startup/run.sh --help  # one command line, 50 runs
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${RUNS:-20}"
npm run --silent build >&2
if [ $# -gt 0 ]; then lines=("$*"); else lines=("--help" "--version" "eval --help" "optimize --help"); fi
echo "node $(node --version), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs"
for line in "${lines[@]}"; do
  # shellcheck disable=SC2086
  node bin/kforge.js $line >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  node bin/kforge.js $line >/dev/null 2>&1 || true
  times=()
  for _ in $(seq 1 "$runs"); do
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    node bin/kforge.js $line >/dev/null 2>&1 || true
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc -l)")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v line="kforge $line" '
    { t[NR] = $1; sum += $1 }
    END { median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2;
          printf "%-22s min %.3f s  median %.3f s  mean %.3f s  max %.3f s\n", line, t[1], median, sum / NR, t[NR] }'
done
