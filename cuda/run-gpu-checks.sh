#!/usr/bin/env bash
# Every GPU check of fpkit in one run, for a machine with an NVIDIA GPU and
# the CUDA toolkit: builds fpkit with --with-cuda for the GPU present (one
# architecture: a fast build), then runs, most wanted first,
#   1. fpk-hwcheck --probe --mma: the tensor cores' accumulation measured
#      by designed dot products (the model's parameters that reproduce
#      them), and the model under each architecture's published parameters
#      and under the measured ones against the matrix units (goal: 99.99%),
#   2. stats-bench: the device statistics against a device-to-device copy
#      of the same bytes, each figure beside the copy's, with its goals,
#   3. tools/dumper/fpkit_dump.py on the GPU, where torch sees one: a tiny
#      model trained there, its steps dumped (--cuda) and read back by
#      fpgrad, and recorded as device statistics (--device-stats); then
#      tests/check_cuda_dump.sh (device_stats() against fpgrad),
#   4. the device statistics against the host's (tests/check_cuda_device)
#      and the device API's refusals (tests/check_cuda_api) with a device,
#   5. fpk-hwcheck --conv --arith --quick: a sample of the float32
#      conversions and of the fp16 and bf16 operand pairs (with
#      FPK_GPU_FULL=1 every input, several minutes more),
# and prints a summary table last.  Each step has its own time limit, the
# build 5 minutes and the others 8 minutes together (FPK_GPU_FULL=1 adds
# 6); on one H100 or H200 with 16 host cores the whole run, the build
# included, is sized for under 8 minutes.
#
# usage: cuda/run-gpu-checks.sh [BUILD_DIR]   (default: /tmp/fpkit-gpu-build)
# With FPK_GPU_PREBUILT=1 the build is skipped: BUILD_DIR already holds one
# (configured and built elsewhere, for a GPU machine without autotools or
# fpkit's build dependencies; their shared libraries on LD_LIBRARY_PATH).
# The logs of every step, the dumps and the device statistics the dumper
# recorded are left in BUILD_DIR/gpu-checks/.  Exit status: 0 all passed,
# 1 a check failed, a goal was missed or no parameter set fits a device,
# 2 the build failed.  Record the summary, with the logs' tables, in
# cuda/RESULTS.md.
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# absolute: the steps run from inside it
build=$(mkdir -p "${1:-/tmp/fpkit-gpu-build}" && cd "${1:-/tmp/fpkit-gpu-build}" && pwd) || exit 2
logs=$build/gpu-checks
jobs=$(nproc 2>/dev/null || echo 4)
full=${FPK_GPU_FULL:-0}
start=$SECONDS
rows=()
status=0

# row NAME RESULT SECONDS: a line of the summary.
row() {
    rows+=("$(printf '%-34s %-58s %5ss' "$1" "$2" "$3")")
}

# step NAME LIMIT LOG CMD...: runs CMD with a time limit, its output in LOG;
# sets rc and took.
step() {
    local name=$1 limit=$2 log=$3
    shift 3
    echo "=== $name (limit ${limit}s)"
    local t0=$SECONDS
    timeout "$limit" "$@" >"$log" 2>&1
    rc=$?
    took=$((SECONDS - t0))
    tail -n 40 "$log"
    echo "=== $name: exit $rc, ${took}s"
}

# failed NAME: the summary's line for a step that did not finish.
failed() {
    case $rc in
    124) row "$1" "TIMED OUT" "$took" ;;
    *) row "$1" "FAILED (exit $rc, see the log)" "$took" ;;
    esac
    status=1
}

rm -rf "$logs" && mkdir -p "$logs" || exit 2
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
if [ -z "$cap" ]; then
    echo "run-gpu-checks: nvidia-smi finds no GPU; building for sm_90" >&2
    cap=90
fi
gencode="-gencode arch=compute_$cap,code=sm_$cap"

export src build gencode jobs
if [ "${FPK_GPU_PREBUILT:-0}" = 1 ]; then
    t0=$SECONDS
    for b in bin/fpk-hwcheck cuda/stats-bench tests/check_cuda_device tests/check_cuda_api \
        bin/fpgrad cuda/.libs/libfpkit_cuda.so; do
        [ -e "$build/$b" ] || { echo "run-gpu-checks: $build/$b is missing" >&2; exit 2; }
    done
    rc=0
    took=$((SECONDS - t0))
    gencode=prebuilt
elif [ -f "$src/config.status" ] && [ "$build" != "$src" ]; then
    echo "run-gpu-checks: $src is configured in place, so it cannot also be built in" \
        "$build: run 'make distclean' there, or give $src as BUILD_DIR" >&2
    exit 2
else
# shellcheck disable=SC2016 # expanded by the inner bash, from the exported variables
step "build (sm_$cap)" 300 "$logs/build.log" bash -c '
    cd "$src" && { [ -x configure ] || autoreconf -fi; } &&
        cd "$build" &&
        "$src/configure" --with-cuda CFLAGS="-O2 -g -Wall -Wextra" NVCC_GENCODE="$gencode" &&
        make -j"$jobs" && make -j"$jobs" tests/check_cuda_device tests/check_cuda_api cuda/stats-bench'
fi

if [ "$rc" -ne 0 ]; then
    row "build (sm_$cap)" "FAILED, see $logs/build.log" "$took"
    printf '%s\n' "${rows[@]}"
    exit 2
fi
row "build (sm_$cap)" "$([ "$gencode" = prebuilt ] && echo "prebuilt in $build" || echo ok)" "$took"
cd "$build" || exit 2

# 1. The accumulation measured, and the model against the device.
step "fpk-hwcheck --probe --mma" 120 "$logs/tc.log" \
    ./bin/fpk-hwcheck --probe --mma --threads "$jobs"
if [ "$rc" -eq 0 ]; then
    # the probe's table: input, probes, sets fit, parameters
    while read -r input fit params; do
        row "  probe $input" "$params ($fit sets fit)" "$took"
        [ "$params" = "NONE FITS" ] && status=1
    done < <(awk '/^input +probes/ { on = 1; next } on && (/^  / || NF == 0) { on = 0 }
        on && NF >= 3 && $2 ~ /^[0-9]+$/ { p = $4; for (i = 5; i <= NF; i++) p = p " " $i;
            print $1, $3, p }' "$logs/tc.log")
    # the agreement lines: the published sets' and the measured one's
    while IFS='|' read -r input line; do
        row "  mma $input" "$line" "$took"
        case $line in *MISSED* | *"measured: none"*) status=1 ;; esac
    done < <(awk '/^  [a-z0-9\/]+ +[0-9]+ dot products:/ {
        s = ""; for (i = 5; i <= NF; i++) {
            if ($i ~ /^(ampere|hopper)$/) s = s $i " " $(i + 1) " ";
            if ($i == "measured") s = s "measured " $(i + 1) " (goal " $(i + 4);
            if ($i == "measured:") s = s "measured: none" }
        print $1 "|" s }' "$logs/tc.log")
else
    failed "fpk-hwcheck --probe --mma"
fi

# 2. The device statistics' speed.
step "stats-bench" 60 "$logs/bench.log" ./cuda/stats-bench 4
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
    # name (30 columns), ms, GB/s, Gelem/s, share of the copy, goal
    while IFS='|' read -r what gbs ratio goal; do
        row "  $what" "$gbs GB/s, $ratio of the copy${goal:+, goal $goal}" "$took"
    done < <(awk '/^(cudaMemcpy|stats )/ { w = substr($0, 1, 30); sub(/ +$/, "", w);
        n = split(substr($0, 31), f, " ");
        if (w ~ /^cudaMemcpy/) print w "|" f[2] "|" f[3] "|";
        else print w "|" f[2] "|" f[4] "|" (n >= 6 ? f[5] " " f[6] : "") }' "$logs/bench.log")
    goals=$(sed -n 's/^stats-bench: goals met: //p' "$logs/bench.log")
    row "stats-bench" "goals met: ${goals:-?}$([ "$rc" -eq 1 ] && echo ' (some MISSED or wrong)')" "$took"
    [ "$rc" -eq 0 ] || status=1
else
    failed "stats-bench"
fi

# 3. The dumper on the GPU: real dumps and device statistics, kept in the logs.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    dumper=$src/tools/dumper/fpkit_dump.py
    # shellcheck disable=SC2016 # expanded by the inner bash
    step "fpkit_dump.py on the GPU" 70 "$logs/dumper.log" env dumper="$dumper" logs="$logs" \
        FPKIT_CUDA_LIB="$build/cuda/.libs/libfpkit_cuda.so" bash -c '
        python3 "$dumper" --demo "$logs/dumps" --cuda --steps 4 &&
        python3 "$dumper" --demo "$logs/device-stats" --device-stats --steps 4 &&
        ./bin/fpgrad --quiet --json "$logs/dumps.json" "$logs/dumps" &&
        python3 -c "import json, sys; d = json.load(open(sys.argv[1]));
print(\"fpgrad read %d tensors\" % len(d[\"tensors\"]))" "$logs/dumps.json"'
    if [ "$rc" -eq 0 ]; then
        nd=$(find "$logs/dumps" -name 'step-*.safetensors' | wc -l)
        ns=$(find "$logs/device-stats" -name 'step-*.jsonl' | wc -l)
        row "fpkit_dump.py --cuda, --device-stats" \
            "$nd dumps ($(sed -n 's/^fpgrad read //p' "$logs/dumper.log")), $ns statistics files" \
            "$took"
    else
        failed "fpkit_dump.py on the GPU"
    fi
    step "the PyTorch device mode" 50 "$logs/dump.log" \
        env srcdir="$src" sh "$src/tests/check_cuda_dump.sh"
    summary=$(grep -h '^check_cuda_dump: ' "$logs/dump.log" 2>/dev/null | tail -n 1)
    [ "$rc" -eq 0 ] || status=1
    row "tests/check_cuda_dump.sh" "${summary:-exit $rc}" "$took"
else
    echo "=== fpkit_dump.py on the GPU: skipped"
    row "fpkit_dump.py on the GPU" "SKIPPED: no python3 with torch that sees a CUDA device" 0
fi

# 4. The device statistics against the host's, and the API on a device.
step "device statistics against the host" 90 "$logs/device.log" ./tests/check_cuda_device
case $rc in
0) row "tests/check_cuda_device" "PASS: $(awk '/: total: / { n += $3 } END { print n + 0 }' \
    "$logs/device.log") cases (element x format) equal" "$took" ;;
77) row "tests/check_cuda_device" "SKIP: $(tail -n 1 "$logs/device.log")" "$took"; status=1 ;;
*) failed "tests/check_cuda_device" ;;
esac

step "the device API's refusals on a device" 30 "$logs/api.log" ./tests/check_cuda_api
case $rc in
0) row "tests/check_cuda_api" "PASS: $(grep -E '^[0-9]+%: Checks' "$logs/api.log" | tail -n 1)" "$took" ;;
*) failed "tests/check_cuda_api" ;;
esac

# 5. The conversions and the arithmetic: a sample, or every input.
if [ "$full" = 1 ]; then
    what="fpk-hwcheck --conv --arith" limit=420 quick=
else
    what="fpk-hwcheck --conv --arith --quick" limit=60 quick=--quick
fi
step "$what" "$limit" "$logs/hwcheck.log" ./bin/fpk-hwcheck --conv --arith $quick --threads "$jobs"
conv=$(awk '/^fp32->/ && $NF ~ /^[0-9]+$/ { c += $(NF-1) } END { print c + 0 }' "$logs/hwcheck.log")
mism=$(sed -n 's/^fpk-hwcheck: \([0-9]*\) mismatches$/\1/p' "$logs/hwcheck.log")
case $rc in
0) row "$what" "0 mismatches; $conv conversion results by convention" "$took" ;;
1) row "$what" "$mism MISMATCHES (see the log)" "$took"; status=1 ;;
*) failed "$what" ;;
esac

total=$((SECONDS - start))
echo
echo "run-gpu-checks: ${gpu:-unknown GPU} (sm_$cap), $jobs host threads, fpkit $(cd "$src" && git describe --always --dirty 2>/dev/null || echo '?')"
printf '%-34s %-58s %6s\n' "step" "result" "time"
printf '%s\n' "${rows[@]}"
printf '%-34s %-58s %5ss\n' "total" "$([ "$status" -eq 0 ] && echo 'all passed' || echo 'FAILURES or missed goals above')" "$total"
[ "$total" -le 480 ] || echo "run-gpu-checks: the run took ${total}s, over its 8 minutes: resize its steps"
echo "run-gpu-checks: logs, dumps and device statistics in $logs"
exit "$status"
