#!/bin/sh
# fpgrad --emit-partial and --merge: partials of each file of the bundled
# sample, merged, give what one run over the sample gives (JSON, CSV and
# table, byte for byte), for two sets of options (MX and SQNR; SR with a
# scale and no SQNR); the refusals (analysis options with --merge, partials
# made differently, a file in two partials, --scale auto, a dump given as
# a partial) each exit 2 with their message; and 400 corruptions of a
# partial (bytes flipped, cut short, grown) are each refused with exit 2
# and one line (the file's hash, or its structure), never read as another
# result, never a crash.  Skipped (77) without python3.
#
# make check runs it from the build directory with srcdir set.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
need_python
sample=$srcdir/tests/data/sample

# merged SET OPTIONS...: a partial per sample file, merged, against one run
# (SET names the files; toolcheck.sh's functions set $name).
merged() {
    set=$1
    shift
    mkdir "$tmp/$set"
    for f in "$sample"/*.safetensors; do
        good "$set-emit" --quiet "$@" --emit-partial "$tmp/$set/$(basename "$f").part" "$f"
    done
    good "$set-one" "$@" --json "$tmp/$set/one.json" --csv "$tmp/$set/one.csv" "$sample"
    good "$set-merged" --merge --json "$tmp/$set/m.json" --csv "$tmp/$set/m.csv" \
        "$tmp/$set"/*.part
    if cmp -s "$tmp/$set/one.json" "$tmp/$set/m.json" &&
        cmp -s "$tmp/$set/one.csv" "$tmp/$set/m.csv" &&
        cmp -s "$tmp/$set-one.out" "$tmp/$set-merged.out"; then
        ok
    else
        bad "$set: the merged partials differ from one run over the sample"
    fi
}
merged mx --formats fp16,bf16,e4m3,mxfp8,mxfp4
merged sr --formats e5m2,e4m3 --round sr --scale 2^10 --no-sqnr

parts=$tmp/mx/step-000000.safetensors.part
error formats 2 'option --formats does not apply to --merge' --merge --formats fp16 "$parts"
error twice 2 'holds tensors of .*step-000000.safetensors, as an earlier partial does' \
    --merge "$parts" "$parts"
error unlike 2 'analysed with other formats, rounding, scale or --no-sqnr than' \
    --merge "$parts" "$tmp/sr/step-000050.safetensors.part"
error auto 2 '--emit-partial cannot record --scale auto' \
    --scale auto --emit-partial "$tmp/auto.part" "$sample"
error dump 2 'step-000000.safetensors: byte 0: no "fpgrad partial 2" line' \
    --merge "$sample/step-000000.safetensors"
error both 2 '--merge and --emit-partial' --merge --emit-partial "$tmp/x.part" "$parts"
if [ -e "$tmp/auto.part" ] || [ -e "$tmp/x.part" ]; then
    bad "a refused run wrote its partial"
else
    ok
fi

# Corruptions: each refused in one line with exit 2.
mkdir "$tmp/bad"
python3 - "$parts" "$tmp/bad" <<'EOF'
import os, random, sys
data = open(sys.argv[1], "rb").read()
rng = random.Random(5)
for k in range(400):
    b = bytearray(data)
    kind = k % 4
    if kind == 0:  # a few bytes flipped in the head (options, names, counts)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(min(len(b), 4096))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # anywhere
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 2:  # cut short
        b = b[:rng.randrange(len(b))]
    else:  # grown
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    open(os.path.join(sys.argv[2], "c%03d.part" % k), "wb").write(b)
EOF
crashes=0 unclear=0 accepted=0
for f in "$tmp"/bad/*.part; do
    rc=0
    $tool_exec "$FPGRAD" --merge --quiet "$f" >/dev/null 2>"$tmp/bad.err" || rc=$?
    case $rc in
    0) accepted=$((accepted + 1)) ;;
    2) [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] && grep -q '^fpgrad: .*c[0-9]*\.part: byte ' "$tmp/bad.err" ||
        unclear=$((unclear + 1)) ;;
    *) crashes=$((crashes + 1)) ;;
    esac
done
if [ "$crashes" -eq 0 ] && [ "$unclear" -eq 0 ] && [ "$accepted" -eq 0 ]; then
    ok
else
    bad "corrupted partials: $crashes crashed, $accepted accepted, $unclear refused unclearly"
fi

summary
