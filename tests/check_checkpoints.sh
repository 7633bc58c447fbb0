#!/bin/sh
# fpgrad on checkpoints as people hold them gives the counts it gives on
# the same tensors as plain safetensors: a torch.save state dict (written
# by torch 1 and 2) against its twin, a sharded model's index file and its
# directory against one file of the same tensors; integer tensors are
# noted, not a reason to refuse the file.  Fixtures:
# tests/data/checkpoints (make-checkpoints.py, make-torch.py).
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"

data=$srcdir/tests/data/checkpoints

# The counts of fpgrad's JSON of PATH, without names and files.
counts() {
    $tool_exec "$FPGRAD" --quiet --json "$tmp/c.json" "$1" 2>"$tmp/c.err" || {
        echo "fpgrad $1 failed: $(cat "$tmp/c.err")"
        return
    }
    sed -e '/"name":/d' -e '/"file":/d' -e '/"tensors": [0-9]/d' -e '/"files":/d' \
        -e '/"version":/d' "$tmp/c.json"
}

same() {
    what=$1 a=$2 b=$3
    counts "$a" >"$tmp/a.txt"
    counts "$b" >"$tmp/b.txt"
    if cmp -s "$tmp/a.txt" "$tmp/b.txt" && [ -s "$tmp/a.txt" ]; then
        ok
    else
        bad "$what: fpgrad's counts differ: $(diff "$tmp/a.txt" "$tmp/b.txt" | head -n 6)"
    fi
}

for n in 1 2; do
    same "torch$n.pt" "$data/torch/torch$n.pt" "$data/torch/torch$n.safetensors"
    if $tool_exec "$FPGRAD" --quiet --json "$tmp/n.json" "$data/torch/torch$n.pt" 2>"$tmp/n.err" &&
        grep -q 'note: 1 tensor not read, not floating point: model.position_ids (i64' "$tmp/n.err"; then
        ok
    else
        bad "torch$n.pt: no note of the int64 buffer: $(cat "$tmp/n.err")"
    fi
done
same "index" "$data/sharded/model.safetensors.index.json" "$data/whole.safetensors"
same "directory" "$data/sharded" "$data/whole.safetensors"
summary
