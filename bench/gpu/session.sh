#!/usr/bin/env bash
# Every GPU measurement the issues ask for, in one lease: the phases run one after another in a
# detached process (setsid), so that they go on between device calls while the machine is held, and
# each call packs what is done so far into $OUT/session-small.tar.gz and $OUT/session.tar.gz.
#
#   here:    bash scripts/bundle-gpu.sh
#   device:  bash bench/gpu/session.sh start [WAIT_S]     (carry .gpu and web/dist; first call)
#            bash bench/gpu/session.sh collect [WAIT_S]   (later calls on the same warm machine)
#
# WAIT_S (default 540): how long the call waits for the phases before it packs and returns.
# CORPUS_DEADLINE_S (default 1000): when the corpus stops its evaluations and writes its record
# (lower it when the lease may hold one call only, so that the record is packed by that call).
# SIZES_BATCH_LIMIT_S (default 330): how long the sizes phase's batch of 40 may run;
# SIZES_CONCURRENT_LIMIT_S (default 120, 0 skips it): its eight concurrent evaluations.
# SIZES_RESUME_FROM: a folder (relative to the tree) with an earlier sizes run's batch.kept.jsonl and
# batch.parts: the batch goes on from there (kforge eval --resume) rather than starting again.
# TIMING_DEADLINE_S (default 1250): when timing-full starts no more timing processes; TIMING_ONLY
# (comma-separated kernel names of timing_record.py): only those; TIMING_CORPUS_ROWS (default
# 13,37,40,45,52): its published kernels from issue 15's corpus; TIMING_NCU_CLOCKS (both, base or
# free; default both): ncu's clock control.
# PHASES (default below) picks and orders them; `a+b+c` runs phases a, b and c at once (for those
# whose figures do not need the machine to themselves). Results: /tmp/kforge-session/<phase>/,
# progress.log.
# Phase order is priority order: what the lease does not reach is what is left for the next one.
# The machine is given back 30 s after a call returns: issue each collect at once. When collect says
# there is no session (a fresh machine), start again with PHASES naming the phases not yet done.
# A phase's files come back in session-small.tar.gz (and session.tar.gz, when it is not too large to
# come back) from every call (unpack each: the latest has most).
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
state=/tmp/kforge-session
frozen=/tmp/kforge-frozen
action="${1:-collect}"
wait_s="${2:-540}"
# test-gpu runs every GPU test; test-gpu-cli only worker/tests/test_gpu.py (the evaluator's own),
# for a lease that has the guard's GPU cases (test_guard_gpu.py) on record already; test-guard only
# those. profile: where a GPU-sized evaluation's worker time goes (bench/gpu/profile-worker.sh).
# Order for the next lease (after 2026-12-03's): guard first (its GPU cost of rms_norm and
# gemm_bias_gelu alone was cut off), then optimize (kforge optimize now evaluates through the
# pipeline, not yet run on a GPU), then throughput (after the next change to where outputs go).
# Phases that time things run alone: on 2026-12-03 four phases at once (optimize, reward, cross,
# guard) shared one GPU and host, and the optimize and guard records were spoiled by crashes nobody
# could explain afterwards; alone, the next lease's runs of both had none.
# The next lease (after 2026-12-04, which had no GPU; issues 15, 16, 17, 19): the GPU tests first
# (the sandbox's and the guard's, which may share the machine), then the sizes record (the memory
# work of 2026-12-04 is not yet seen on a GPU; its first step is one 6 GiB problem alone), the timing
# record alone, the corpus, the isolation's cost.
# After 2026-12-05 (no GPU either; the timing routine gained the hold, the reference worker a
# persistent torch.compile cache, the corpus a CUDA event forgery c05h): the isolation's cost moves
# up beside the sandbox's tests, so that one lease of about 25 usable minutes (env, tests, cost,
# sizes, timing: about 1,500 s of limits) can finish issue 19's and issue 17's records; the corpus
# (issue 15) and the CLI check follow if time is left.
# The lease of 2026-12-05 (env, test-guard+sandbox, sandbox-cost, timing, sizes in 1,556 s) showed
# the limits too short: test_guard_gpu.py's 18 builds overran 300 s, the timing record fitted two
# processes of ten in 300 s (builds 159 s, 71-73 s a process), 19_ReLU alone overran 100 s. The
# limits below are what each needs; a lease now holds about two of the long phases: pick PHASES.
# After 2026-12-05 (outputs handed over and deleted as they are judged; the cross-check drops its
# outputs): the timing record narrowed to seven kernels in ten processes without the flush-alone
# repeat, ten `kforge eval --cross-check` of LayerNorm; the sizes record without its lone 19_ReLU
# (the batch has it) with the guard's and the sandbox's GPU tests beside it (a lease holds about two
# long phases: these share the machine, as the evaluations of issue 17 must); then the corpus.
# The second lease of 2026-12-05 finished the timing record (ten processes, ncu, ten kforge eval
# cross-checks) and the sandbox's tests (35/35); the sizes phase, sharing the machine with the
# guard's and the sandbox's tests, made no record (prefetches ahead of built candidates, since
# fixed), and the guard's tests found c03 missed under the hold (fixed) and c07c dying of SIGSEGV.
# Next: the guard's tests (c03; c07c with its stack now printed, and the crash-probe phase:
# bench/gpu/crash_probe.py runs c07c plain, under a dispatch mode, under the profiler and its
# all-threads mode, under both, on cuda and on torch 2.11's cpu, to tell a crash of the candidate's
# from one of the harness's), the require-mode eval, the corpus (now with KernelBench's own
# adversarial test kernels), sizes.
# After the third session of 2026-12-05 (no GPU): the guard's tests, the require-mode eval and the
# crash probe of c07c together (small problems), then the corpus alone (issue 15: 10 of 52 evaluated
# so far, never a lease of its own), then timing-small (issue 16), then sizes (issue 17) as time allows.
# The third lease of 2026-12-05 (be35ad4) ran that plan: test_guard_gpu 40/46 (the six all c07c, whose
# crash the probe showed to be the platform's: a C++ exception out of an extension kills the process
# with nothing of kforge loaded), timing-small in nine processes, the sizes batch's first 8 of 40;
# the require-mode eval and 11 of the corpus's first 25 waited behind twelve corpus jobs on the one
# device until their limits. Next: the require-mode eval alone (short), the corpus alone with four
# jobs and a limit that leaves room for the queue, then sizes alone.
# After the fifth session of 2026-12-05 (no GPU): the corpus (issue 15) needs a lease of its own
# with a limit that does not count the queue; timing-small (issue 16) needs its tenth process and a
# measure of what the events add at the smallest sizes (the floor: nothing, and a single-element
# kernel, with ncu); the sizes record (issue 17) needs to know where a 6 GiB evaluation's minute goes
# before it can fit a lease. So: timing-small holds kforge's device lock from its start while the
# corpus's twelve evaluations build beside it and then take the device in turn, and the profile of
# one 19_ReLU-sized evaluation (KFORGE_WORKER_PROFILE) takes its turn among them.
# The fourth lease of 2026-12-05 (45a411a) ran that: timing-small in ten processes with its floor
# (issue 16's spreads met; events read 4-6 us above ncu at 37-51 us, 2-3 us of it not yet measured
# apart), the profile (a 6 GiB output costs 2.1 s to judge, 70% of it reading the file), the sizes
# batch's first 7 and 4 of 8 concurrent, and only 16 corpus pairs: the device lock's waiters took
# it in no order and a prefetch held its evaluation back (fixed: first come, first served). Next:
# the flush's cost (issue 16's last figure) holding the lock while the corpus builds, the corpus
# with the lock fixed, the profile again with the CUDA allocator's history (issue 17's extra
# 7.5 GiB in the candidate role), then sizes. The corpus's `own-kernels` runs take one correctness
# trial: that policy's verdict rests on what ran in the traced first trial, and the five trials'
# correctness is the `kernelbench` run's (a kernel costs one full evaluation and a short one).
# output-io first, alone (about a minute): a 6 GiB output saved and loaded with the reader on one
# thread and on four (docs/benchmarks/output-io.md).
# The lease of the seventh session of 2026-12-05 came on an H100 (80 GB): the flush-cost run failed
# at once (torch.sum without dim; fixed), the profile and the corpus's first RMSNorm ran out of
# memory in the reference's judge stage beside twelve waiting kforge processes, and the machine
# stopped answering after 9 minutes (15 corpus pairs were packed); the next start failed and the
# session's device time ran out. Next: what a worker holds on the device before its turn
# (context-probe, half a minute), then the flush's cost (issue 16's last figure) holding the lock
# while the corpus builds, the corpus to its deadline (issue 15: 40 pairs under both policies in
# one run), then sizes with what is left. The corpus runs 8 jobs, not 12: on the H100 machine
# twelve kforge processes (each with its workers, about 1-3 GB resident apiece) beside a 6 GiB
# evaluation may have run the 128 GB host out of memory when it stopped answering; the GPU, not
# the builds, sets the corpus's pace.
# The sixth session's lease (an H100 again, 057b78e) ran that plan: the context probe (hello makes no
# context; a warm worker holds 612 MiB), the flush's cost (3.5-6 us of write-back behind the zeroing
# flush), the corpus to its deadline (65 pairs started, 57 under both policies, no machine fault in
# 122 evaluations of eight processes at once), then timing-small on the same card by hand. What is
# left is issue 17's batch of 40 at their own sizes in one run, about 25 minutes of device time at
# the fourth lease's rate: the next lease is that alone, SIZES_BATCH_LIMIT_S=1350 (the phase's
# limit follows it), issued as the first call so that later calls only collect. Issue 16's record
# also lacks the ten-process spreads and ncu of eleven shipped examples and of five published
# kernels beyond good-kernels' three (item 7): `timing-full` (every shipped example and eight
# published kernels, $timing_corpus_rows below, in ten processes with ncu, about 1,250 s) is a
# lease of its own too. One per session: sizes first, timing-full in the session after.
# The ninth session (2026-12-05/06) got a machine at its seventeenth call, an hour in, with 629 s
# left: context-cap (six kforge eval at a cap of two contexts, all correct, 116 s) and a memory
# profile with the sandbox off (the candidate's 12 GiB in the stale-output check). Next: the sizes
# batch as a session's first call (about 25 minutes), `profile` to measure the check's fix (the
# sandboxed candidate's profile now comes back), then timing-full's remaining kernels (TIMING_ONLY,
# TIMING_DEADLINE_S to fit).
# The tenth session (2026-12-06) lost 811 s to six machines that did not start; its one lease (an
# H200, a4ab604) ran the batch for 650 s with --resume (19 of 40 evaluated, all correct, kept in
# bench/gpu/results/sizes-h200-2026-12-06/batch.kept.jsonl) and the profile (the check's fix: 18.03
# and 30.15 GiB). Next: the batch's other 21 from there, as the first call:
#   SIZES_RESUME_FROM=bench/gpu/results/sizes-h200-2026-12-06 SIZES_BATCH_LIMIT_S=900 \
#     SIZES_CONCURRENT_LIMIT_S=0 PHASES=sizes bash bench/gpu/session.sh start 540
# (the keys cover the problem and candidate paths, so the frozen tree and the session folder must
# stay where they are: /tmp/kforge-frozen, /tmp/kforge-session), then timing-full's kernels.
# The eleventh session (2026-12-06) had 100 s of device time (the tenth's submission had not
# landed, and its leases counted), under the floor at which a machine starts: no lease. The plan
# above stands. Its 21 problems are the level-1 convolution, cumsum and cross-entropy, thirteen of
# level 2 and all five of level 3; none has run on a GPU here yet, so their time is a guess, and
# the batch's kept file makes a second call cheap if the first does not finish them.
# The twelfth session (2026-12-06) asked for the H200 and got an H100, after two refusals: the batch
# went on from the eighth lease's kept file in two runs (900 s, 401 s) to 35 of 40 (34 correct, one
# published kernel written for an older problem incorrect, none blamed on the machine), kept in
# bench/gpu/results/sizes-h100-2026-12-06-e/batch.kept.jsonl.gz (compressed: the tree travels to the
# device within 64 MiB with .gpu and .gpu-corpus; kernelbench_sizes.sh reads either form). It also
# found --wait counting the batch's own queue (fixed). Next: the last five (56, 91 of level 2;
# ResNet18, MobileNetV2, VisionTransformer of level 3; fresh builds) and eight concurrent evaluations
# at these sizes, as the first call (the eight largest take the device one after another, 51-63 s
# each on the H200, so the eighth waits about 450 s: the concurrent limit is 600 s):
#   SIZES_RESUME_FROM=bench/gpu/results/sizes-h100-2026-12-06-e SIZES_BATCH_LIMIT_S=420 \
#     SIZES_CONCURRENT_LIMIT_S=600 PHASES=sizes bash bench/gpu/session.sh start 540
# then collect twice. That is one session's device time (a fresh machine's start counted about
# 300 s of it); timing-full's sixteen kernels (about 870 s) the session after, the record's missing
# eleven shipped examples and five corpus rows:
#   TIMING_ONLY=level1_01_relu,level1_03_sum_dim,level1_04_argmax_dim,level1_06_log_softmax,level1_08_rms_norm,level1_09_matmul_square,level1_11_conv2d,level2_02_conv_relu_maxpool,level2_03_bias_silu_scale_clamp,level2_04_residual_add_layernorm,level3_01_residual_mlp,corpus/13-74_conv_transposed_1D_dilated,corpus/37-40_LayerNorm,corpus/40-l1_p26,corpus/45-19_ReLU,corpus/52-l1_p36 \
#     TIMING_DEADLINE_S=900 PHASES=timing-full bash bench/gpu/session.sh start 540
# The tenth lease (2026-12-06, an H100, afd8cc3) finished issue 17's record: the batch's last five
# (bench/gpu/results/sizes-h100-2026-12-06-f/) and eight concurrent evaluations, all correct. Its
# verdicts showed two faults of the speedups, fixed since in the timing summary: a launch-bound
# eager read as host load (ResNet18 and ViT at 3.0x for eager's own operators), and eager's re-timing
# beside three convolution candidates read twice its cached figure and was used. Next lease, as
# the first call: timing-full's sixteen kernels (issue 16's record, about 15 minutes, alone), then
# anchor-probe (up to 10 minutes: seven pairs of the batch, three of them those whose re-timing
# doubled, baselines afresh then cached, and a plain-process probe of eager) to find what slowed
# the re-timing:
#   TIMING_ONLY=level1_01_relu,level1_03_sum_dim,level1_04_argmax_dim,level1_06_log_softmax,level1_08_rms_norm,level1_09_matmul_square,level1_11_conv2d,level2_02_conv_relu_maxpool,level2_03_bias_silu_scale_clamp,level2_04_residual_add_layernorm,level3_01_residual_mlp,corpus/13-74_conv_transposed_1D_dilated,corpus/37-40_LayerNorm,corpus/40-l1_p26,corpus/45-19_ReLU,corpus/52-l1_p36 \
#     TIMING_DEADLINE_S=900 bash bench/gpu/session.sh start 540
# then collect until both are packed.
# The fourteenth session (2026-12-06) got no machine: six calls, each refused or taken back before it
# ran, spent its 1,800 s. A lease may be short, so timing-full now writes its record after every
# process (a call that packs mid-phase brings back what was measured) and takes ncu once per kernel
# with the clocks free (TIMING_NCU_CLOCKS=free, as kforge times). Next, in chunks that each finish
# inside one call (about 500 s: builds 100-160 s, ten processes of 8 s plus about 4 s a kernel, ncu),
# each a `start` of its own on the same warm machine once the call before has returned its files:
#   A: TIMING_NCU_CLOCKS=free TIMING_DEADLINE_S=470 PHASES=timing-full TIMING_ONLY=level1_01_relu,level1_03_sum_dim,level1_04_argmax_dim,level1_06_log_softmax,level1_08_rms_norm,level1_09_matmul_square bash bench/gpu/session.sh start 570
#   B: the same with TIMING_ONLY=level1_11_conv2d,level2_02_conv_relu_maxpool,level2_03_bias_silu_scale_clamp,level2_04_residual_add_layernorm,level3_01_residual_mlp
#   C: the same with TIMING_ONLY=corpus/13-74_conv_transposed_1D_dilated,corpus/37-40_LayerNorm,corpus/40-l1_p26,corpus/45-19_ReLU,corpus/52-l1_p36
# then PHASES=anchor-probe (its plain-process probe now also takes the first forwards on a device
# filled but for 1 GiB: the suspected cause of the doubled re-timings is a cuDNN algorithm chosen on
# a full device and kept for the process).
# The fifteenth session (2026-12-06, an H100, 48b36d2 and 5cc8b96) ran timing-full's sixteen kernels in
# one call (505 s, all ten processes and ncu; docs/benchmarks/timing-h200.md, last section), then
# anchor-direct (the cuDNN engine chosen on a full device doubled ConvTranspose2d's eager figure and
# kept it for the process) and clock-probe (the figures above 1% spread moved with the power cap; a
# second's warm-up per label brought every figure within 0.80%). Next: a warm-up by time in `kforge
# eval` itself (the candidate's dialogue and the reference's baselines) measured in ten processes of
# `kforge eval --cross-check` for level3_01_residual_mlp and level2_02_conv_relu_maxpool; the third
# doubled problem (35_Conv2d_Subtract_HardSwish_MaxPool_Mish) through anchor_probe.py; and a fix for
# the cuDNN engine (room for workspaces in the memory budget, or each worker's first forward taken
# with that room) shown to bring the fast engine back.
# The sixteenth session (2026-12-06) put the warm-up by time into `kforge eval` (--warmup-ms, default
# 1000 on a GPU). Its lease: eval-spread (ten `kforge eval --cross-check --refresh-baselines` of each
# of the four heaviest shipped examples, bench/gpu/eval_spread.sh), then eval-spread-cold (the two
# that spread above 1%, --warmup-ms 0: the same command without the warm-up by time), then
# anchor-conv35 (the third doubled problem through anchor_probe.py):
#   PHASES='eval-spread eval-spread-cold anchor-conv35' bash bench/gpu/session.sh start 560
# That lease (an H100, 7b9d238) ran all three: every figure of the four within 0.86% over ten runs
# (docs/benchmarks/timing-h200.md, last section), and 35_Conv2d doubles on a full device as the other
# two did. Not run on a GPU since the third lease of 2026-12-05 (be35ad4, 40/46, the six c07c's
# platform crash, since skipped where a process of its own confirms the platform): the guard's GPU
# cases, test_guard_gpu.py (about 320 s). Issue 16 asks for the adversarial suite green on both
# backends, so that is the next lease's first call, with the timing attacks through `kforge eval`
# itself (its warm-up by time is the path the worker tests do not take):
#   PHASES='test-guard guard-eval' bash bench/gpu/session.sh start 540
# The seventeenth session (2026-12-06, evening) got no machine in sixteen calls, the device time
# spent on the tries. The eighteenth (22fe56b, an H100) ran it: 40/46, every timing case holding;
# the six c07c's, whose skip did not fire: the platform kills the process for an integer written to
# a stream inside the extension, not for an exception (format-probe below; the test's probe now
# names one). Next: the same two phases once more, to see c07c's six skip with that probe, and the
# format probe after them (alone: its builds and launches stay out of the timing cases).
default_phases="test-guard guard-eval format-probe"
eval_spread_examples="${EVAL_SPREAD_EXAMPLES:-level3_01_residual_mlp level2_02_conv_relu_maxpool level1_09_matmul_square level1_11_conv2d}"
# The timing record's kernels: Stanford's three published ones that build, and four shipped examples.
# Three examples at a sixteenth of their size (20-60 us a call: the issue's 3% bound from 20 us up) and
# the three kernels whose ncu figure read above kforge's and do_bench's (ncu's clock control, both ways).
timing_small_kernels="level1_02_gelu@small,level1_05_softmax@small,level1_07_layer_norm@small"
# timing-full's published kernels beyond good-kernels: rows of bench/gpu/kernelbench-corpus.tsv that
# kforge judged correct in the sixth corpus lease and that build with CUDA 13 (LLMKernel's
# 74_conv_transposed_1D, tritonLLM's 40_LayerNorm and thekernelcompany's ReLU in Triton; the
# leaderboard's 26_GELU_ and 36_RMSNorm_ in CUDA; 44 us to 1.7 ms a call on an H100).
timing_corpus_rows="${TIMING_CORPUS_ROWS:-13,37,40,45,52}"
# clock-probe's kernels: the compute-bound ones of the 2026-12-06 timing-full record (an H100) whose
# medians moved 0.8-1.65% between processes, timed in ten processes beside a log of the SM clock,
# then in ten more with every label warmed up for a second first.
clock_kernels="level3_01_residual_mlp,level2_02_conv_relu_maxpool,level1_09_matmul_square,level1_11_conv2d"
timing_kernels="good-kernels/LayerNorm,good-kernels/LayerNorm2,good-kernels/Softmax,level1_02_gelu,level1_05_softmax,level1_07_layer_norm,level2_01_gemm_bias_gelu"

. scripts/gpu-node.sh
export KFORGE_CACHE_DIR=/tmp/kforge-cache KFORGE_PYTHON="${KFORGE_PYTHON:-python3}" PYTHONUNBUFFERED=1

note() { echo "$(date -u +%H:%M:%S) $*" >> "$state/progress.log"; }

phase() {  # phase NAME LIMIT_S COMMAND…: runs one phase with its own log, limit and exit status
  local name="$1" limit="$2"; shift 2
  mkdir -p "$state/$name"
  note "start $name (limit ${limit}s)"
  local started=$SECONDS
  timeout --kill-after=10 "$limit" bash -c "$*" > "$state/$name/log" 2>&1
  local rc=$?
  note "end $name rc=$rc in $((SECONDS - started))s"
}

run_group() {  # run_group a+b+c: the phases at once, then waits for all of them
  local part
  for part in ${1//+/ }; do run_phase "$part" & done
  wait
}

run_phases() {
  for entry in ${PHASES:-$default_phases}; do
    case "$entry" in *+*) run_group "$entry" ;; *) run_phase "$entry" ;; esac
  done
  note "all phases done"
}

run_phase() {
    local name="$1"
    case "$name" in
      env) phase env 120 "nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv; \
        python3 -c 'import sys, torch, triton; print(sys.version); print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, torch.cuda.get_device_name(0)); print(\"triton\", triton.__version__)'; \
        nvcc --version; nproc; free -g; node --version; kforge doctor; \
        bash scripts/test-gpu.sh tests/test_gpu.py -k hold -v -rs" ;;
      test-gpu) phase test-gpu 600 "bash scripts/test-gpu.sh -v -rs --durations=0 --junitxml=$state/test-gpu/junit.xml" ;;
      test-gpu-cli) phase test-gpu-cli 600 "bash scripts/test-gpu.sh tests/test_gpu.py -v -rs --durations=0 --junitxml=$state/test-gpu-cli/junit.xml" ;;
      eval) phase eval 1200 "OUT=$state/eval bash bench/gpu/eval-h200.sh all" ;;
      cross) phase cross 400 "OUT=$state/cross bash bench/gpu/eval-h200.sh cross" ;;
      profile) phase profile 900 "OUT=$state/profile PROFILE_MEMORY=1 PROFILE_SETS='batch_size=4096 dim=393216' bash bench/gpu/profile-worker.sh" ;;
      output-io) phase output-io 240 "for threads in 1 4 1 4; do python3 bench/output-io/run.py --device cuda --mib 6144 --threads \$threads --repeats 3 --host-side --hold-device-lock; done > $state/output-io/runs.jsonl" ;;
      context-probe) phase context-probe 120 "python3 bench/gpu/context_probe.py $state/context-probe" ;;
      context-cap) phase context-cap 330 "OUT=$state/context-cap bash bench/gpu/context_cap.sh" ;;
      flush-cost) phase flush-cost 300 "python3 bench/gpu/flush_cost.py $state/flush-cost --ncu --processes 3 --hold-device-lock" ;;
      test-guard) phase test-guard 600 "bash scripts/test-gpu.sh tests/test_guard_gpu.py -v -rs --durations=0 --junitxml=$state/test-guard/junit.xml" ;;
      crash-probe) phase crash-probe 300 "python3 bench/gpu/crash_probe.py tests/adversarial/problems/relu.py tests/adversarial/cuda/c07c_fallback_runs.py \
          --timeout 120 --out $state/crash-probe/c07c-cuda.json > $state/crash-probe/c07c-cuda.txt 2>&1; \
        python3 bench/gpu/crash_probe.py tests/adversarial/problems/relu.py tests/adversarial/cpu/c07c_fallback_runs.py --device cpu \
          --timeout 90 --out $state/crash-probe/c07c-cpu.json > $state/crash-probe/c07c-cpu.txt 2>&1" ;;
      format-probe) phase format-probe 300 "python3 bench/gpu/format_probe.py" ;;
      host-costs) phase host-costs 300 "python3 bench/gpu/host_costs.py --repeats 2" ;;
      guard) phase guard 500 "python3 bench/guard/run.py --backend cuda --repeats 2 --work /tmp/kforge-guard-work --out $state/guard/runs.json \
        examples/level1_02_gelu/cuda_fast.py examples/level1_08_rms_norm/cuda_fast.py examples/level2_01_gemm_bias_gelu/cuda_fast.py" ;;
      optimize) phase optimize 600 "node .gpu/bin/optimize.mjs --backend cuda --out $state/optimize" ;;
      throughput) phase throughput 1500 "node .gpu/bin/throughput.mjs --backend cuda --problems 15 --sequential-sample 3 --re-evaluations 2 --python python3 --out $state/throughput" ;;
      reward) phase reward 600 "node .gpu/bin/reward.mjs --backend cuda --cold 16 --warm 500 --concurrency 16 --python python3 --out $state/reward" ;;
      timing) phase timing 760 "bash scripts/test-gpu.sh tests/test_gpu.py -k 'hold or cross_check' -v -rs > $state/timing/test-hold.txt 2>&1; \
        python3 bench/gpu/timing_record.py $state/timing --corpus .gpu-corpus/ScalingIntelligence+good-kernels --deadline-s 420 \
          --published-processes 10 --only $timing_kernels; \
        for i in 1 2 3 4 5 6 7 8 9 10; do kforge eval .gpu-corpus/ScalingIntelligence+good-kernels/LayerNorm/ref.py .gpu-corpus/ScalingIntelligence+good-kernels/LayerNorm/src.py \
          --backend cuda --cross-check --refresh-baselines --json > $state/timing/eval-layernorm-\$i.json 2> $state/timing/eval-layernorm-\$i.stderr; done" ;;
      timing-full) phase timing-full $(( ${TIMING_DEADLINE_S:-1250} + 150 )) "python3 bench/gpu/timing_record.py $state/timing-full --corpus .gpu-corpus/ScalingIntelligence+good-kernels \
          --corpus-rows $timing_corpus_rows --published-processes 10 --no-small --deadline-s ${TIMING_DEADLINE_S:-1250} --hold-device-lock --ncu-clocks ${TIMING_NCU_CLOCKS:-both} \
          ${TIMING_ONLY:+--only $TIMING_ONLY}" ;;
      timing-small) phase timing-small 480 "python3 bench/gpu/timing_record.py $state/timing-small --corpus .gpu-corpus/ScalingIntelligence+good-kernels \
          --deadline-s 400 --published-processes 1 --only $timing_small_kernels --floor --noflush --hold-device-lock" ;;
      corpus) phase corpus $(( ${CORPUS_DEADLINE_S:-1000} + 90 )) "python3 bench/gpu/kernelbench_corpus.py --corpus .gpu-corpus/selected --out $state/corpus --jobs 8 --timeout 1200 \
        --deadline-s ${CORPUS_DEADLINE_S:-1000} --eval-args '--perf-trials 20' --policy-args 'own-kernels=--no-timing --trials 1'" ;;
      sandbox) phase sandbox 480 "cd worker && python3 -m pytest -q -p no:cacheprovider tests/test_sandbox.py -rs > $state/sandbox/test_sandbox.txt 2>&1; cd ..; \
        KFORGE_SANDBOX=require kforge eval problems/level1/02_gelu.py examples/level1_02_gelu/cuda_fast.py --backend cuda --json > $state/sandbox/eval-require.json 2> $state/sandbox/eval-require.stderr" ;;
      sandbox-require) phase sandbox-require 300 "KFORGE_SANDBOX=require kforge eval problems/level1/02_gelu.py examples/level1_02_gelu/cuda_fast.py \
        --backend cuda --json > $state/sandbox-require/eval-require.json 2> $state/sandbox-require/eval-require.stderr" ;;
      sandbox-cost) phase sandbox-cost 200 "python3 bench/sandbox/run.py --backend cuda --repeats 2 --probes 10 --out $state/sandbox-cost/sandbox-h200.json examples/level1_02_gelu/cuda_fast.py > $state/sandbox-cost/sandbox-h200.md 2>&1" ;;
      sizes) phase sizes $(( ${SIZES_BATCH_LIMIT_S:-330} + ${SIZES_CONCURRENT_LIMIT_S:-120} + 110 )) "OUT=$state/sizes RESUME_FROM=${SIZES_RESUME_FROM:-} SINGLE_LIMIT_S=0 BATCH_LIMIT_S=${SIZES_BATCH_LIMIT_S:-330} CONCURRENT_LIMIT_S=${SIZES_CONCURRENT_LIMIT_S:-120} PERF_TRIALS=20 bash bench/gpu/kernelbench_sizes.sh .gpu-corpus/ScalingIntelligence+KernelBench .gpu-corpus/anneouyang+KernelBenchLeaderboard" ;;
      anchor-direct) phase anchor-direct 300 "OUT=$state/anchor-direct PROBE_ONLY=1 bash bench/gpu/anchor_probe.sh .gpu-corpus/ScalingIntelligence+KernelBench .gpu-corpus/anneouyang+KernelBenchLeaderboard" ;;
      clock-probe) phase clock-probe 760 "for variant in plain warm; do warm=0; [ \$variant = warm ] && warm=1000; \
          python3 bench/gpu/timing_record.py $state/clock-probe/\$variant --corpus .gpu-corpus/ScalingIntelligence+good-kernels --only $clock_kernels \
          --processes 10 --no-ncu --no-small --deadline-s 360 --clock-log --warmup-ms \$warm --hold-device-lock; done" ;;
      eval-spread) phase eval-spread $(( ${EVAL_SPREAD_DEADLINE_S:-900} + 120 )) "OUT=$state/eval-spread DEADLINE_S=${EVAL_SPREAD_DEADLINE_S:-900} \
          bash bench/gpu/eval_spread.sh $eval_spread_examples; python3 bench/gpu/eval_spread.py $state/eval-spread > $state/eval-spread/table.md" ;;
      eval-spread-cold) phase eval-spread-cold $(( ${EVAL_SPREAD_COLD_DEADLINE_S:-420} + 120 )) "OUT=$state/eval-spread-cold FLAGS='--warmup-ms 0' \
          DEADLINE_S=${EVAL_SPREAD_COLD_DEADLINE_S:-420} bash bench/gpu/eval_spread.sh level3_01_residual_mlp level2_02_conv_relu_maxpool; \
          python3 bench/gpu/eval_spread.py $state/eval-spread-cold > $state/eval-spread-cold/table.md" ;;
      anchor-conv35) phase anchor-conv35 300 "problem=.gpu-corpus/ScalingIntelligence+KernelBench/KernelBench/level2/35_Conv2d_Subtract_HardSwish_MaxPool_Mish.py; \
          python3 bench/gpu/anchor_probe.py \$problem > $state/anchor-conv35/plain.txt 2>&1; \
          python3 bench/gpu/anchor_probe.py \$problem --free-gib 1 > $state/anchor-conv35/free-1gib.txt 2>&1" ;;
      guard-eval) phase guard-eval 300 "for case in c03_side_stream h03_side_stream_joined c05h_event_clock_got c06_graph_replay; do \
          kforge eval tests/adversarial/problems/relu.py tests/adversarial/cuda/\$case.py --backend cuda --json \
            > $state/guard-eval/\$case.json 2> $state/guard-eval/\$case.stderr; echo \"\$case rc=\$?\"; done" ;;
      anchor-probe) phase anchor-probe 600 "OUT=$state/anchor-probe bash bench/gpu/anchor_probe.sh .gpu-corpus/ScalingIntelligence+KernelBench .gpu-corpus/anneouyang+KernelBenchLeaderboard" ;;
      cli-check) phase cli-check 240 "kforge --version > $state/cli-check/version.txt 2>&1; \
        kforge eval problems/level1/01_relu.py examples/level1_01_relu/cuda_incorrect.py --backend cuda > $state/cli-check/incorrect.txt 2>&1; \
        kforge eval problems/level1/02_gelu.py examples/level1_02_gelu/cuda_compile_error.py --backend cuda > $state/cli-check/compile_error.txt 2>&1" ;;
      torch2-suite) phase torch2-suite 600 "cd worker && python3 -m pytest -q -p no:cacheprovider -x -m 'not gpu' --durations=15" ;;
      *) note "unknown phase $name" ;;
    esac
}

pack() {
  local out="${OUT:-/tmp/kforge-out}"
  mkdir -p "$out"
  # Two archives: session-small.tar.gz (every file under 8 MiB but allocator snapshots: records,
  # logs, JSON lines such as the sizes batch's batch.kept.jsonl, 1.2 MB for 19 results) fits what
  # comes back from a call (16 MiB a file; these compress about tenfold); session.tar.gz adds the
  # large files and may not. The sizes phase's pairs/ (copies of the corpus) and build outputs go
  # in neither.
  (cd "$state" && find . -type f -size -8192k -not -name '*.pickle' -not -path './sizes/pairs/*' -not -path '*/build/*' -not -name '*.so' -not -name '*.o' -print0 \
    | tar -czf "$out/session-small.tar.gz" --null -T - 2>/dev/null)
  tar -czf "$out/session.tar.gz" -C "$state" --exclude='*.so' --exclude='*.o' --exclude='build' --exclude='./sizes/pairs' . 2>/dev/null
  ls -l "$out"
  echo "--- progress"; cat "$state/progress.log"
  for file in "$state"/output-io/runs.jsonl "$state"/flush-cost/flush_cost.md "$state"/context-probe/context_probe.md "$state"/crash-probe/c07c-cuda.txt "$state"/crash-probe/c07c-cpu.txt "$state"/format-probe/log "$state"/timing-small/timing_record.md "$state"/timing-full/timing_record.md "$state"/clock-probe/plain/timing_record.md "$state"/clock-probe/warm/timing_record.md "$state"/timing/test-hold.txt "$state"/timing/timing_record.md "$state"/corpus/result.md "$state"/sizes/result.md "$state"/sandbox/test_sandbox.txt "$state"/eval/results-*.md "$state"/cross/cross-check.txt "$state"/throughput/result.md "$state"/throughput/partial.json "$state"/optimize/result.md "$state"/reward/result.md "$state"/profile/runs.txt; do
    [ -f "$file" ] && { echo "--- $file"; head -c 3000 "$file"; }
  done
  for log in "$state"/*/log; do echo "--- tail $log"; tail -n 8 "$log"; done
  [ -f "$state/anchor-probe/log" ] && { echo "--- anchor-probe"; tail -n 30 "$state/anchor-probe/log"; }
  [ -f "$state/anchor-direct/log" ] && { echo "--- anchor-direct"; tail -n 60 "$state/anchor-direct/log"; }
}

case "$action" in
  run-phases) run_phases; exit 0 ;;
  start)
    if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then echo "already running"; else
      rm -rf "$state" "$frozen"; mkdir -p "$state" "$frozen"
      # The phases run from a copy of the tree as it was at `start`: a later call re-sends the
      # working tree, and a worker started mid-benchmark must not import newer code.
      tar -C "$root" --exclude=./.git --exclude=./node_modules -cf - . | tar -C "$frozen" -xf -
      setsid nohup bash "$frozen/bench/gpu/session.sh" run-phases > "$state/orchestrator.log" 2>&1 < /dev/null &
      echo $! > "$state/pid"
      note "orchestrator $(cat "$state/pid") started: ${PHASES:-$default_phases}"
    fi ;;
  collect) [ -d "$state" ] || { echo "no session on this machine (it was given back): start again"; exit 3; } ;;
  *) echo "usage: session.sh start|collect [WAIT_S]"; exit 2 ;;
esac
waited=0
while [ "$waited" -lt "$wait_s" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; do sleep 5; waited=$((waited + 5)); done
pack
