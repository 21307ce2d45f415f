#!/usr/bin/env bash
# Lays out the published kernels and problems that the GPU records evaluate (bench/gpu/session.sh's
# timing, sizes and corpus phases) from fetched repositories, in folders git ignores: they are not
# ours to ship.
#
#   bash scripts/prepare-gpu-corpus.sh [MIRRORS]
#
# MIRRORS (default /work/.mirror) holds one bare repository per fetched project, as the `fetch` tool
# leaves them: <owner>+<name>/repo. Each one's newest tree is extracted into .corpus/<owner>+<name>/;
# then .gpu-corpus/ gets what a lease reads: the whole KernelBench, good-kernels and leaderboard
# trees (timing and sizes) and, in .gpu-corpus/selected/, the files bench/gpu/kernelbench-corpus.tsv
# lists (corpus). Carry `.gpu-corpus` (and `.gpu`, from scripts/bundle-gpu.sh) to the device.
set -euo pipefail
cd "$(dirname "$0")/.."
mirrors="${1:-/work/.mirror}"
[ -d "$mirrors" ] || { echo "prepare-gpu-corpus: no folder $mirrors (give the folder of fetched repositories)" >&2; exit 2; }
rm -rf .corpus .gpu-corpus
mkdir -p .corpus .gpu-corpus
for git_dir in "$mirrors"/*/repo; do
  [ -d "$git_dir" ] || continue
  name="$(basename "$(dirname "$git_dir")")"
  mkdir -p ".corpus/$name"
  git --git-dir="$git_dir" archive HEAD | tar -x -C ".corpus/$name"
  echo "extracted $name at $(git --git-dir="$git_dir" rev-parse --short HEAD)"
done
for name in ScalingIntelligence+KernelBench ScalingIntelligence+good-kernels anneouyang+KernelBenchLeaderboard; do
  if [ -d ".corpus/$name" ]; then cp -r ".corpus/$name" .gpu-corpus/; else echo "prepare-gpu-corpus: $name was not fetched; the phases that read it will skip it" >&2; fi
done
python3 bench/gpu/kernelbench_corpus.py --corpus .corpus --copy-to .gpu-corpus/selected
du -sh .gpu-corpus
