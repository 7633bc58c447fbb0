#!/bin/sh
# fpk-hwcheck's command line: --help and --version, usage errors, the man
# page's SYNOPSIS against the usage; then either, without a CUDA device,
# exit status 4 and one line saying so (nothing is checked: the GPU runs are
# cuda/run-gpu-checks.sh's), or with one a --quick run of every check,
# which must find no mismatch and print every table.
#
# make check runs it from the build directory with srcdir set; FPK_HWCHECK
# names another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
tool=fpk-hwcheck tool_bin=${FPK_HWCHECK:-./bin/fpk-hwcheck}
. "$srcdir/tests/toolcheck.sh"

good help --help
has help '^usage: fpk-hwcheck ' '--conv' '--arith' '--mma' '^Exit status'
synopsis "$srcdir/man/fpk-hwcheck.1" "$tmp/help.out"
good version --version
has version '^fpk-hwcheck \(fpkit [0-9.]+\)$'
error unknown 2 'unknown option "--bogus"' --bogus
error operand 2 'unexpected operand "x"' x
error threads 2 '--threads' --threads 0
error tiles 2 '--tiles' --tiles x
error device 2 '--device' --device -1

run device --quick
rc=$(cat "$tmp/device.rc")
if [ "$rc" -eq 4 ]; then
    if [ "$(wc -l <"$tmp/device.err")" -eq 1 ] && grep -q '^fpk-hwcheck: no CUDA device' "$tmp/device.err" &&
        [ ! -s "$tmp/device.out" ]; then
        ok
    else
        bad "no device: exit 4 but the message is not one line: $(cat "$tmp/device.err")"
    fi
    skipped "the --quick run on a GPU (no CUDA device here)"
elif [ "$rc" -eq 0 ]; then
    has device '^fpk-hwcheck: device 0: ' '^conversions from float32' '^fp16 arithmetic' \
        '^bf16 arithmetic' '^tensor-core accumulation' '^matrix products' \
        '^fpk-hwcheck: 0 mismatches$'
else
    bad "fpk-hwcheck --quick exited $rc: $(tail -n 5 "$tmp/device.err")"
    tail -n 40 "$tmp/device.out"
fi

summary
