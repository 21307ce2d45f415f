#!/usr/bin/env bash
# Packs one benchmark run's raw output into the form the tree keeps it in: one compressed archive
# beside it, bench/<benchmark>/results/<run>.tar.xz. What a run writes (logs, JSON, the candidates it
# generated as .py files) stays out of the tree unpacked: .gitignore ignores everything under
# bench/*/results/ but the archives, so no generated file sits where tsc, Biome, flake8, black,
# pytest or a duplicate finder read source. The record in docs/benchmarks/ that cites the run names
# its archive.
#
#   bash scripts/archive-bench-run.sh bench/throughput/results/cpu-2026-12-02     # → cpu-2026-12-02.tar.xz
#   bash scripts/archive-bench-run.sh bench/sandbox/results/sandbox-cost-cpu.json # → sandbox-cost-cpu.tar.xz
#   tar -xJf bench/throughput/results/cpu-2026-12-02.tar.xz -C bench/throughput/results   # unpack to read
#
# The archive is reproducible (names sorted; times, owners and modes fixed), so packing the same
# files again gives the same bytes. The run's folder is removed once its archive reads back whole.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: archive-bench-run.sh bench/<benchmark>/results/<run>" >&2; exit 2; }
run="${1%/}"
case "$run" in
  bench/*/results/*) ;;
  *) echo "archive-bench-run: expected a path bench/<benchmark>/results/<run>, got \`$run\`" >&2; exit 2 ;;
esac
[ -e "$run" ] || { echo "archive-bench-run: \`$run\` does not exist" >&2; exit 2; }
folder="$(dirname "$run")"
name="$(basename "$run")"
stem="$name"
[ -f "$run" ] && stem="${name%.*}"
archive="$folder/$stem.tar.xz"
[ -e "$archive" ] && { echo "archive-bench-run: \`$archive\` exists already" >&2; exit 1; }
tar -C "$folder" --sort=name --mtime='2026-01-01 00:00:00Z' --owner=0 --group=0 --numeric-owner \
  --mode='u+rw,go+r,go-w' -cf - "$name" | xz -9 -T1 > "$archive.partial"
tar -tJf "$archive.partial" > /dev/null
mv "$archive.partial" "$archive"
rm -rf "$run"
echo "$archive ($(du -k "$archive" | cut -f1) KiB)"
