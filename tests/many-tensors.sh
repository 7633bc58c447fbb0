#!/bin/sh
# Writes a safetensors file of N tensors of two elements each, named
# model.layers.K/8.wK%8, of DTYPE F32 or BF16: a checkpoint of many small
# tensors for tests/check_memory.sh and bench/bench_tensors.sh.  The
# elements repeat 2^-10, -2^-10, 2^-9 and 2^-12 (as float32; the same
# bytes read as BF16 pairs hold 0, 2^-10, ...).
#
# usage: tests/many-tensors.sh N DTYPE FILE
set -eu

n=$1 dtype=$2 file=$3
case $dtype in
F32) size=4 ;;
BF16) size=2 ;;
*)
    echo "many-tensors.sh: DTYPE must be F32 or BF16, not $dtype" >&2
    exit 2
    ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/many-tensors.XXXXXX")
trap 'rm -rf "$work"' EXIT

awk -v n="$n" -v dtype="$dtype" -v size="$size" 'BEGIN {
    printf "{"
    for (k = 0; k < n; k++)
        printf "%s\"model.layers.%d.w%d\":{\"dtype\":\"%s\",\"shape\":[2],\"data_offsets\":[%d,%d]}",
            k ? "," : "", k / 8, k % 8, dtype, 2 * size * k, 2 * size * (k + 1)
    printf "}"
}' >"$work/header"
len=$(wc -c <"$work/header" | tr -d ' ')
pad=$(((8 - len % 8) % 8))
len=$((len + pad))
{
    # the header's length, 8 bytes little-endian, as octal escapes
    for shift in 0 8 16 24; do
        # shellcheck disable=SC2059
        printf "\\$(printf %03o $((len >> shift & 255)))"
    done
    printf '\000\000\000\000'
    cat "$work/header"
    printf '%*s' "$pad" ''
} >"$file"
# the elements: a 16-byte unit doubled until it covers them all
printf '\000\000\200\072\000\000\200\272\000\000\000\073\000\000\200\071' >"$work/unit"
while [ "$(wc -c <"$work/unit" | tr -d ' ')" -lt $((2 * size * n)) ]; do
    cat "$work/unit" "$work/unit" >"$work/unit2" && mv "$work/unit2" "$work/unit"
done
head -c $((2 * size * n)) "$work/unit" >>"$file"
