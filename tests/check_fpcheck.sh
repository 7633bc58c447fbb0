#!/bin/sh
# fpcheck on the checkpoints of tests/data/checkpoints (make-checkpoints.py):
# each convention written as published passes; the same checkpoints with
# their nibbles swapped or their scales inverted are flagged, with exit
# status 1 and the line that says which; a torch.save file's integer
# buffer is listed as not read; every output fits 100 columns.  The
# SYNOPSIS of man/fpcheck.1 is --help's usage.
#
# make check runs it from the build directory with srcdir set; FPCHECK
# names another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPCHECK=${FPCHECK:-./bin/fpcheck}
tool=fpcheck tool_bin=$FPCHECK
. "$srcdir/tests/toolcheck.sh"

data=$srcdir/tests/data/checkpoints

# expect DIR STATUS PATTERN: fpcheck DIR exits with STATUS and prints PATTERN,
# and no line of its output is wider than 100 columns.
expect() {
    name=$(printf '%s' "$1" | tr '/.' '__')
    run "$name" "$data/$1"
    rc=$(cat "$tmp/$name.rc")
    if [ "$rc" -ne "$2" ]; then
        bad "$1: exit status $rc, expected $2: $(head -n 3 "$tmp/$name.err" "$tmp/$name.out")"
    elif ! grep -qE -- "$3" "$tmp/$name.out"; then
        bad "$1: no line matching /$3/: $(cat "$tmp/$name.out")"
    elif [ -s "$tmp/$name.err" ]; then
        bad "$1: wrote to standard error: $(head -n 2 "$tmp/$name.err")"
    else
        ok
    fi
    fits "$name"
}

for d in mxfp4 nvfp4 fp8 ct-nvfp4; do
    expect $d 0 ' 0 flagged'
done
expect mxfp4-swapped 1 'gate_up_proj: nibbles swapped\?'
expect nvfp4-swapped 1 'up_proj.weight: nibbles swapped\?'
expect mxfp4-inverted 1 'down_proj: scales inverted\?'
expect nvfp4-inverted 1 'o_proj.weight: scales inverted\?'
expect fp8-inverted 1 'gate_proj.weight: scales inverted\?'
expect torch/torch2.pt 0 'model.position_ids i64 \[1, 8\]: not read \(integer\)'
# the JSON holds every measure
if $tool_exec "$FPCHECK" --json "$tmp/c.json" "$data/mxfp4-swapped" >/dev/null 2>&1; then
    bad "mxfp4-swapped --json: exit status 0"
elif grep -q '"nibbles": "WRONG"' "$tmp/c.json" && grep -q '"scales_order": "ok"' "$tmp/c.json"; then
    ok
else
    bad "mxfp4-swapped --json: $(head -c 300 "$tmp/c.json")"
fi

# The usage lines of --help are the SYNOPSIS of the man page.
manpage=$srcdir/man/fpcheck.1
if "$FPCHECK" --help >"$tmp/help.out" 2>&1; then ok; else bad "--help failed"; fi
synopsis "$manpage" "$tmp/help.out"
summary
