#!/bin/sh
# fpgrad --recipes: the standard recipes on the bundled sample, every
# tensor's counts and SQNR, each recipe's median, reference and keep list
# and the ranking recomputed independently with numpy
# (tests/recipes_numpy.py); the same answers on one thread and on two; the
# text within 100 columns; the CSV's lines; the delayed recipe's histories
# over the sample's steps; the Hadamard recipe skipping rows it cannot
# take; --keep-below; the plot and the report; the options it refuses.
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.  The numpy part is skipped without numpy, the plot and
# the report's without gnuplot.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
sample=$srcdir/tests/data/sample
need_python

# The ranking and every number under it, against numpy.
good json --recipes standard --json - --threads 2 "$sample"
if ! have_modules numpy; then
    skipped "numpy: the ranking recomputed (needs numpy)"
elif "$py" "$srcdir/tests/recipes_numpy.py" "$tmp/json.out" "$sample"/*.safetensors \
    >"$tmp/numpy.txt" 2>&1; then
    ok
else
    bad "numpy: $(tail -n 3 "$tmp/numpy.txt")"
fi

# One thread gives the same bytes as two.
good json1 --recipes standard --json - --threads 1 "$sample"
if cmp -s "$tmp/json.out" "$tmp/json1.out"; then ok; else bad "--threads 1 and 2 differ"; fi

# The text: the verdict first, the ranking, the worst tensors with their
# steps; no line over 100 columns, with --all too.
good text --recipes standard "$sample"
has text '^Least loss: fp8-block128: half the elements' '^  #  recipe +median dB' \
    '^  1  fp8-block128 ' '^  5  mxfp4 ' 'The 10 tensors that lose most under fp8-block128' \
    '^  tensor +step +fp8-block128 +fp8-tensor-current'
good all --recipes all --all "$sample"
has all '^Every tensor, SQNR in dB' 'more recipes in --json and --csv'
for f in text all; do
    wide=$(awk 'length > 100' "$tmp/$f.out" | head -n 1)
    if [ -z "$wide" ]; then ok; else bad "$f: a line over 100 columns: $wide"; fi
done

# The CSV: a line per tensor and recipe, then one per recipe's total.
good csv --recipes standard --csv - "$sample"
lines=$(wc -l <"$tmp/csv.out" | tr -d ' ')
if [ "$lines" -eq $((1 + 128 * 5 + 5)) ]; then ok; else bad "csv: $lines lines"; fi
if [ "$(grep -c '^total,' "$tmp/csv.out")" -eq 5 ]; then ok; else bad "csv: totals"; fi

# Delayed scaling: each tensor's first step (32 tensors in step 0) has no
# history; the later steps' tensors have.  The summary says so.
good delayed --recipes fp8-tensor-delayed,fp8-tensor-current --json - "$sample"
if python3 - "$tmp/delayed.out" <<'EOF'; then ok; else bad "delayed: histories"; fi
import json, sys
r = json.load(open(sys.argv[1]))
d = next(x for x in r["recipes"] if x["name"] == "fp8-tensor-delayed")
assert d["no_history"] == 32, d["no_history"]
for t in r["tensors"]:
    c = t["recipes"]["fp8-tensor-delayed"]
    assert c["no_history"] == (t["step"] == 0), (t["name"], t["step"])
    if c["no_history"]:  # scaled from its own amax: current scaling's answer
        assert c["e2"] == t["recipes"]["fp8-tensor-current"]["e2"], t["name"]
EOF
good delayed_text --recipes fp8-tensor-delayed "$sample"
has delayed_text 'Note: fp8-tensor-delayed: 32 tensors have no earlier step'

# The Hadamard recipe takes rows of a multiple of 16: the rest are skipped.
good rht --recipes nvfp4-rht,nvfp4 --json - "$sample"
if python3 - "$tmp/rht.out" <<'EOF'; then ok; else bad "rht: skipped rows"; fi
import json, sys
r = json.load(open(sys.argv[1]))
rht = next(x for x in r["recipes"] if x["name"] == "nvfp4-rht")
skipped = [t for t in r["tensors"] if not t["recipes"]["nvfp4-rht"]["applied"]]
assert rht["skipped"] == len(skipped) > 0
assert all(t["view"][1] % 16 for t in skipped)
assert all(t["recipes"]["nvfp4"]["applied"] for t in r["tensors"])
EOF
good rht_text --recipes nvfp4-rht "$sample"
has rht_text '^Note: nvfp4-rht skips [0-9]+ tensors whose rows are not a multiple of 16'

# --keep-below: a threshold above every SQNR keeps every tensor.
good keep --recipes mxfp4 --keep-below 200 --json - "$sample"
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["recipes"][0]; assert len(r["keep_bf16"]) == 128 and r["keep_below_db"] == 200' "$tmp/keep.out"; then ok; else bad "keep-below"; fi
good keep_text --recipes mxfp4 --keep-below 200 --top 2 "$sample"
has keep_text '^Keep in BF16 under mxfp4: 128 tensors under 200.0 dB: [^ ]+, [^ ]+,$' \
    '^  and 126 more\.$'

# A spelled-out recipe with options, beside a preset; a recipe named twice.
good spelled --recipes 'e4m3/fp32/amax/0x0,margin=1,pow2,mxfp4,mxfp4' --json - "$sample"
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["recipes"]; assert sorted(x["name"] for x in r) == ["e4m3/fp32/amax/0x0,margin=1,pow2", "mxfp4"], r' "$tmp/spelled.out"; then ok; else bad "spelled-out recipes"; fi

# The plot and the report.
if [ "$have_gnuplot" = yes ]; then
    good plot --quiet --recipes standard --plot "$tmp/r.png" "$sample"
    if [ -s "$tmp/r.png" ]; then ok; else bad "plot: no picture"; fi
    good report --quiet --recipes standard --report "$tmp/rep" "$sample"
    for f in index.html fpgrad.json fpgrad.csv recipes.png; do
        if [ -s "$tmp/rep/$f" ]; then ok; else bad "report: no $f"; fi
    done
    if grep -q 'Least loss: fp8-block128' "$tmp/rep/index.html"; then ok; else bad "report: summary"; fi
else
    skipped "plot and report (needs gnuplot)"
fi

# What --recipes refuses.
error conflict 2 'option --formats does not apply to --recipes' --recipes nvfp4 --formats fp16 "$sample"
error conflict2 2 'option --scale does not apply to --recipes' --recipes nvfp4 --scale auto "$sample"
error keeponly 2 'option --keep-below applies to --recipes only' --keep-below 3 "$sample"
error badkeep 2 'option --keep-below: expected a number of dB' --recipes nvfp4 --keep-below x "$sample"
error badrecipe 2 'option --recipes: recipe "nvfp5"' --recipes nvfp5 "$sample"
error badoption 2 'option --recipes: recipe "nvfp4,bogus": unknown option' --recipes nvfp4,bogus "$sample"

echo "check_fpgrad_recipes: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
