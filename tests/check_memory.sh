#!/bin/sh
# Bounded memory: fpgrad analyses an 8 GiB .npy dump (a header, then a
# sparse hole of 2^30 float64 zeros made by truncate, never written) in
# $TMPDIR on two threads with a peak resident set under 200 MB, measured by /usr/bin/time
# -v, or else by getrusage in python3, and a 4 GiB one of float32, which
# it reads through a mapping; a sparse file whose holes end inside
# elements reads right; and a safetensors file of 100,000 tensors (a
# DeepSeek-V3-sized checkpoint's count) takes at most 2 kB of peak resident
# set a tensor, JSON written (not in a sanitizer build, FPK_SANITIZERS=yes,
# whose allocator keeps freed memory).  Skipped (77) where the file system
# cannot hold a sparse file, or nothing can measure; not run under
# VALGRIND, whose own memory would be measured.
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"

limit_kb=$((200 * 1000))
if [ -n "${VALGRIND:-}" ]; then
    echo "check_memory: not run under valgrind"
    exit 77
fi

# The .npy header of 2^30 little-endian float64 (8 GiB), padded so that
# the data starts at byte 128.
n=1073741824
dict="{'descr': '<f8', 'fortran_order': False, 'shape': ($n,), }"
pad=$((128 - 10 - ${#dict} - 1))
dump=$tmp/big.npy
{
    printf '\223NUMPY\001\000\166\000'
    printf '%s%*s\n' "$dict" "$pad" ''
} >"$dump"
if [ "$(wc -c <"$dump" | tr -d ' ')" -ne 128 ]; then
    bad "the .npy header is not 128 bytes"
    summary
fi
if ! truncate -s $((128 + 8 * n)) "$dump" 2>/dev/null ||
    [ "$(du -k "$dump" | cut -f 1)" -gt 1024 ]; then
    echo "check_memory: $TMPDIR cannot hold a sparse 8 GiB file"
    exit 77
fi

# peak_kb COMMAND...: runs it, its output into $tmp/run.{out,err}, and
# prints its peak resident set in kB.
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
    peak_kb() {
        /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/run.out" 2>"$tmp/run.err" || true
        sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tmp/time.txt"
        grep -q '^[[:space:]]*Exit status: 0$' "$tmp/time.txt" || echo "exit status"
    }
    how="/usr/bin/time -v"
elif [ "$have_python" = yes ]; then
    peak_kb() {
        python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[3:], stdout=open(sys.argv[1], "w"), stderr=open(sys.argv[2], "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
if rc:
    print("exit status")
' "$tmp/run.out" "$tmp/run.err" "$@"
    }
    how="getrusage"
else
    echo "check_memory: neither /usr/bin/time nor python3 to measure memory"
    exit 77
fi

# (Two threads, whatever the machine: each holds its own buffers, about
# 1.2 MB.)
start=$(date +%s)
kb=$(peak_kb "$FPGRAD" --quiet --threads 2 --json "$tmp/big.json" "$dump")
took=$(($(date +%s) - start))
case $kb in
*"exit status"*)
    bad "fpgrad on the 8 GiB dump failed: $(head -n 3 "$tmp/run.err")"
    ;;
*)
    echo "check_memory: fpgrad read 8 GiB ($n float64) in ${took}s with a peak RSS of $kb kB ($how)"
    if [ "$kb" -lt "$limit_kb" ]; then ok; else bad "peak RSS $kb kB, over $limit_kb kB"; fi
    if grep -q "\"count\": $n,\$" "$tmp/big.json" && grep -q "\"zeros\": $n,\$" "$tmp/big.json"; then
        ok
    else
        bad "the JSON does not count $n zeros"
    fi
    ;;
esac
if [ "$(du -k "$dump" | cut -f 1)" -le 1024 ]; then ok; else bad "the sparse input was written to"; fi
rm -f "$dump"

# The same for float32, which fpgrad reads through a mapping of the file
# (fpk_dump_view): 4 GiB of it, each part given back once read.
dict="{'descr': '<f4', 'fortran_order': False, 'shape': ($n,), }"
pad=$((128 - 10 - ${#dict} - 1))
{
    printf '\223NUMPY\001\000\166\000'
    printf '%s%*s\n' "$dict" "$pad" ''
} >"$dump"
truncate -s $((128 + 4 * n)) "$dump"
kb=$(peak_kb "$FPGRAD" --quiet --threads 2 --json "$tmp/big32.json" "$dump")
case $kb in
*"exit status"*)
    bad "fpgrad on the 4 GiB float32 dump failed: $(head -n 3 "$tmp/run.err")"
    ;;
*)
    echo "check_memory: fpgrad read 4 GiB ($n float32) with a peak RSS of $kb kB ($how)"
    if [ "$kb" -lt "$limit_kb" ]; then ok; else bad "float32: peak RSS $kb kB, over $limit_kb kB"; fi
    if grep -q "\"zeros\": $n,\$" "$tmp/big32.json"; then ok; else bad "float32: not $n zeros"; fi
    ;;
esac
rm -f "$dump"

# Holes read as zeros, also where an element straddles the end of one: a
# safetensors file whose 3072 float32 start at byte 4098, so that every
# 4096-byte block boundary falls inside an element.  Only the high bytes
# of element 2047 (1.0, 00 00 80 3f), right after the boundary at 12288,
# and of the last (2.0) are written; the blocks before them stay holes.
st=$tmp/holes.safetensors
hdr='{"x":{"dtype":"F32","shape":[3072],"data_offsets":[0,12288]}}'
{
    printf '\372\017\000\000\000\000\000\000' # 4090, the header's length
    printf '%-4090s' "$hdr"
} >"$st"
truncate -s 16386 "$st"
printf '\200\077' | dd of="$st" bs=1 seek=12288 conv=notrunc 2>/dev/null
printf '\100' | dd of="$st" bs=1 seek=16385 conv=notrunc 2>/dev/null
if "$FPGRAD" --quiet --json "$tmp/holes.json" "$st" 2>"$tmp/holes.err" &&
    grep -q '"count": 3072,$' "$tmp/holes.json" && grep -q '"zeros": 3070,$' "$tmp/holes.json" &&
    grep -q '"amax": 2.0,$' "$tmp/holes.json" && grep -q '"log2_min": 0,$' "$tmp/holes.json"; then
    ok
else
    bad "holes: not 3070 zeros, 1.0 and 2.0: $(cat "$tmp/holes.err") $(grep -E '"(count|zeros|amax|log2_min)"' "$tmp/holes.json" | head -n 4)"
fi

# Many tensors: 100,000 float32 tensors of two elements in one safetensors
# file (tests/many-tensors.sh).
ntensors=100000
many=$tmp/many.safetensors
sh "$srcdir/tests/many-tensors.sh" $ntensors F32 "$many"
# many_run WHAT ARGS...: fpgrad ARGS on the many tensors, its peak RSS
# bounded at 2 kB a tensor and 20 MB (no bound in a sanitizer build)
many_limit_kb=$((2 * ntensors + 20000))
many_run() {
    what=$1
    shift
    if [ "${FPK_SANITIZERS:-no}" = yes ]; then
        if "$FPGRAD" "$@" "$many" >/dev/null 2>"$tmp/run.err"; then ok; else
            bad "many tensors, $what: $(head -n 3 "$tmp/run.err")"
        fi
        return
    fi
    start=$(date +%s)
    kb=$(peak_kb "$FPGRAD" "$@" "$many")
    took=$(($(date +%s) - start))
    case $kb in
    *"exit status"*)
        bad "fpgrad on $ntensors tensors, $what, failed: $(head -n 3 "$tmp/run.err")"
        ;;
    *)
        echo "check_memory: fpgrad, $what, read $ntensors tensors in ${took}s with a peak RSS of $kb kB ($how)"
        if [ "$kb" -lt "$many_limit_kb" ]; then ok; else
            bad "many tensors, $what: peak RSS $kb kB, over $many_limit_kb kB (2 kB a tensor and 20 MB)"
        fi
        ;;
    esac
}
[ "${FPK_SANITIZERS:-no}" != yes ] || echo "check_memory: many tensors: no memory bound in a sanitizer build"
many_run "JSON written" --quiet --json "$tmp/many.json"
many_run "--recipes standard, JSON written" --quiet --recipes standard --json "$tmp/many-recipes.json"
if [ "$(grep -c '^      "dtype": "f32",$' "$tmp/many-recipes.json")" -eq "$ntensors" ]; then ok; else
    bad "many tensors: the recipes' JSON does not report $ntensors tensors"
fi
# every tensor reported, with its own name and count
if [ "$(grep -c '^      "count": 2,$' "$tmp/many.json")" -eq "$ntensors" ] &&
    grep -q '"name": "model.layers.12499.w7",$' "$tmp/many.json"; then
    ok
else
    bad "many tensors: the JSON does not report $ntensors two-element tensors"
fi
summary
