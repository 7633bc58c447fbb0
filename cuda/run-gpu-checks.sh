#!/usr/bin/env bash
# Every GPU check of fpkit in one run, for a machine with an NVIDIA GPU and
# the CUDA toolkit: builds fpkit with --with-cuda for the GPU present (one
# architecture: a fast build), then runs
#   1. the device statistics against the host's (tests/check_cuda_device),
#      and the device API's refusals (tests/check_cuda_api) with a device,
#   2. fpk-hwcheck --conv --arith: every float32 conversion and every fp16
#      and bf16 operand pair against the library,
#   3. fpk-hwcheck --mma: the tensor-core model against the matrix units,
#   4. stats-bench: the device statistics' GB/s against a device-to-device
#      copy of the same bytes,
#   5. the PyTorch mode of tools/dumper/fpkit_dump.py (where torch sees the GPU),
# and prints a summary table last.  Sized for one large GPU and 16 host
# cores; each step has its own time limit: 17.5 minutes in all, 12.5
# without the build (cuda/RESULTS.md records the runs).
#
# usage: cuda/run-gpu-checks.sh [BUILD_DIR]   (default: /tmp/fpkit-gpu-build)
# With FPK_GPU_PREBUILT=1 the build is skipped: BUILD_DIR already holds one
# (configured and built elsewhere, for a GPU machine without autotools or
# fpkit's build dependencies; their shared libraries on LD_LIBRARY_PATH).
# The logs of every step are left in BUILD_DIR/gpu-checks/.  Exit status:
# 0 all passed, 1 a check failed, 2 the build failed.  Record the summary,
# with the logs' tables, in cuda/RESULTS.md.
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# absolute: the steps run from inside it
build=$(mkdir -p "${1:-/tmp/fpkit-gpu-build}" && cd "${1:-/tmp/fpkit-gpu-build}" && pwd) || exit 2
logs=$build/gpu-checks
jobs=$(nproc 2>/dev/null || echo 4)
start=$SECONDS
rows=()
status=0

# row NAME RESULT SECONDS: a line of the summary.
row() {
    rows+=("$(printf '%-40s %-52s %5ss' "$1" "$2" "$3")")
}

# step NAME LIMIT LOG CMD...: runs CMD with a time limit, its output in LOG;
# sets rc and took.
step() {
    local name=$1 limit=$2 log=$3
    shift 3
    echo "=== $name"
    local t0=$SECONDS
    timeout "$limit" "$@" >"$log" 2>&1
    rc=$?
    took=$((SECONDS - t0))
    tail -n 40 "$log"
    echo "=== $name: exit $rc, ${took}s"
}

mkdir -p "$logs" || exit 2
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

step "device statistics against the host" 120 "$logs/device.log" ./tests/check_cuda_device
case $rc in
0) row "tests/check_cuda_device" "PASS: $(awk '/: total: / { n += $3 } END { print n + 0 }' \
    "$logs/device.log") cases (element x format) equal" "$took" ;;
77) row "tests/check_cuda_device" "SKIP: $(tail -n 1 "$logs/device.log")" "$took"; status=1 ;;
*) row "tests/check_cuda_device" "FAIL (exit $rc)" "$took"; status=1 ;;
esac

step "the device API's refusals on a device" 60 "$logs/api.log" ./tests/check_cuda_api
case $rc in
0) row "tests/check_cuda_api" "PASS: $(grep -E '^[0-9]+%: Checks' "$logs/api.log" | tail -n 1)" "$took" ;;
*) row "tests/check_cuda_api" "FAIL (exit $rc)" "$took"; status=1 ;;
esac

step "fpk-hwcheck --conv --arith" 300 "$logs/hwcheck.log" \
    ./bin/fpk-hwcheck --conv --arith --threads "$jobs"
conv=$(awk '/^fp32->/ && $NF ~ /^[0-9]+$/ { c += $(NF-1) } END { print c + 0 }' "$logs/hwcheck.log")
mism=$(sed -n 's/^fpk-hwcheck: \([0-9]*\) mismatches$/\1/p' "$logs/hwcheck.log")
case $rc in
0) row "fpk-hwcheck --conv --arith" "0 mismatches; $conv conversion results by convention" "$took" ;;
1) row "fpk-hwcheck --conv --arith" "$mism MISMATCHES (see the log)" "$took"; status=1 ;;
124) row "fpk-hwcheck --conv --arith" "TIMED OUT" "$took"; status=1 ;;
*) row "fpk-hwcheck --conv --arith" "FAILED (exit $rc)" "$took"; status=1 ;;
esac

step "fpk-hwcheck --mma" 90 "$logs/mma.log" ./bin/fpk-hwcheck --mma --threads "$jobs"
if [ "$rc" -eq 0 ]; then
    while read -r fmt line; do
        row "  mma $fmt agreement" "$line" "$took"
    done < <(awk '/^  (fp16|bf16|tf32) +[0-9]+ dot products:/ {
        f = $1; s = ""; for (i = 5; i <= NF; i += 2) s = s $i " " $(i+1) " "; print f, s }' "$logs/mma.log")
else
    row "fpk-hwcheck --mma" "FAILED (exit $rc)" "$took"
    status=1
fi

step "stats-bench" 60 "$logs/bench.log" ./cuda/stats-bench 4
if [ "$rc" -eq 0 ]; then
    while IFS='|' read -r what gbs ratio; do
        row "  $what" "$gbs GB/s, $ratio of the copy" "$took"
    done < <(awk '/^(cudaMemcpy|stats )/ { n = NF; w = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+$/, "", w);
        print w "|" $(n-1) "|" $n }' "$logs/bench.log")
else
    row "stats-bench" "FAILED (exit $rc)" "$took"
    status=1
fi

step "the PyTorch device mode" 120 "$logs/dump.log" \
    env srcdir="$src" sh "$src/tests/check_cuda_dump.sh"
summary=$(grep -h '^check_cuda_dump: ' "$logs/dump.log" 2>/dev/null | tail -n 1)
[ "$rc" -eq 0 ] || status=1
row "tests/check_cuda_dump.sh" "${summary:-exit $rc}" "$took"

echo
echo "run-gpu-checks: ${gpu:-unknown GPU} (sm_$cap), $jobs host threads, fpkit $(cd "$src" && git describe --always --dirty 2>/dev/null || echo '?')"
printf '%-40s %-52s %6s\n' "step" "result" "time"
printf '%s\n' "${rows[@]}"
printf '%-40s %-52s %5ss\n' "total" "$([ "$status" -eq 0 ] && echo 'all passed' || echo 'FAILURES above')" "$((SECONDS - start))"
exit "$status"
