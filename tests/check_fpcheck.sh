#!/bin/sh
# fpcheck on the checkpoints of tests/data/checkpoints (make-checkpoints.py):
# each convention written as published passes; the same checkpoints with
# their nibbles swapped or their scales inverted are flagged, with exit
# status 1 and the line that says which; a torch.save file's integer
# buffer is listed as not read; every output fits 100 columns.  The
# SYNOPSIS of man/fpcheck.1 is --help's usage, and its examples run.
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

# Every example of the man page runs from a directory laid out as the
# source tree (tests/data/checkpoints): a checkpoint written wrongly on
# purpose (-swapped, -inverted) is flagged, with status 1 and the line that
# says so; any other passes with status 0; nothing goes to standard error
# and every line fits 100 columns.
# shellcheck disable=SC2034 # read by the eval below
fpcheck_abs=$(cd "$(dirname "$FPCHECK")" && pwd)/$(basename "$FPCHECK")
mkdir -p "$tmp/ex/tests/data"
ln -s "$data" "$tmp/ex/tests/data/checkpoints"
sed -n 's/^\.Dl fpcheck //p' "$manpage" | sed 's/\\-/-/g' >"$tmp/examples"
nex=0
while IFS= read -r line; do
    nex=$((nex + 1))
    case $line in
    *-swapped*) want=1 says='nibbles swapped\?' ;;
    *-inverted*) want=1 says='scales inverted\?' ;;
    *) want=0 says=' 0 flagged' ;;
    esac
    rc=0
    (cd "$tmp/ex" && eval "\"\$fpcheck_abs\" $line") >"$tmp/ex$nex.out" 2>"$tmp/ex.err" ||
        rc=$?
    if [ "$rc" -ne "$want" ] || [ -s "$tmp/ex.err" ]; then
        bad "man page example: fpcheck $line: status $rc, expected $want: $(head -n 2 "$tmp/ex.err")"
    elif ! grep -qE -- "$says" "$tmp/ex$nex.out"; then
        bad "man page example: fpcheck $line: no line matching /$says/"
    else
        ok
    fi
    fits "ex$nex"
done <"$tmp/examples"
if [ "$nex" -ge 3 ]; then ok; else bad "$manpage: only $nex examples run"; fi
summary
