#!/bin/sh
# fpswamp on tiny dumps whose answers are known exactly: the swamping facts
# of the literature (fp16: 1 + 2^-11 and 2^-3 + 2^-14 are lost; bf16:
# 1 + 2^-9 is lost), the bins of the effective-update ratio, Kahan
# recovering what round to nearest even loses, the drift of each strategy
# over 64 steps (stochastic rounding unbiased over 200 seeds), updates from
# gradients and a learning-rate sweep, two dumps paired by name, the JSON,
# an update more than half but not wholly lost (where the sum crosses a
# power of two), the text (its summary agrees with the JSON, --top and
# --all, 100 columns, singulars), the error cases, the plots and the man
# page's examples on the bundled sample.  Expected values are worked out by hand in the comments, never
# computed by fpkit.
#
# make check runs it from the build directory with srcdir set; FPSWAMP
# names another binary.  Parts that need gnuplot or mandoc are reported as
# skipped when those are missing.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPSWAMP=${FPSWAMP:-./bin/fpswamp}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
manpage=$srcdir/man/fpswamp.1
sample=$srcdir/tests/data/sample
tool=fpswamp tool_bin=$FPSWAMP
. "$srcdir/tests/toolcheck.sh"
need_python

python3 - "$tmp" <<'EOF'
import json, os, struct, sys

out = sys.argv[1]
p2 = lambda e: 2.0 ** e

def safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, shape, values in tensors:
        b = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

def npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
                + struct.pack("<%df" % len(values), *values))

# The facts: w + dw for five elements (and an exact zero update, not counted).
safetensors(os.path.join(out, "facts.safetensors"), [
    ("weight/a", [6], [1.0, 0.125, 1.0, 1.0, 1.0, 1.0]),
    ("update/a", [6], [p2(-11), p2(-14), p2(-9), p2(-11) + p2(-20), p2(-10), 0.0]),
])
# One element, one update replayed: 1 + 64 * 2^-12.
safetensors(os.path.join(out, "steps.safetensors"), [
    ("weight/k", [1], [1.0]),
    ("update/k", [1], [p2(-12)]),
])
# Gradients: with lr 1/8 the updates are 2^-11 and 2^-9.
safetensors(os.path.join(out, "grads.safetensors"), [
    ("weight/g", [2], [1.0, 1.0]),
    ("grad/g", [2], [-p2(-8), -p2(-6)]),
])
safetensors(os.path.join(out, "sweep.safetensors"), [
    ("weight/s", [1], [1.0]),
    ("grad/s", [1], [-1.0]),
])
# e4m3 (3 fraction bits, subnormal spacing 2^-9): W = -15 * 2^-9, dw =
# -0.00448 rounds to D = -2^-8; W + D = -17 * 2^-9 lies in the binade of
# spacing 2^-8, a tie between -2^-5 and -2^-5 - 2^-8, rounded to the even
# -2^-5: the weight moves by 2^-9 = 0.436 dw, more than half lost but not
# all.  The second element, the same update on -14 * 2^-9, lands on -2^-5
# exactly: r = 2^-8 / 0.00448 = 0.87.
safetensors(os.path.join(out, "half.safetensors"), [
    ("weight/h", [2], [-15 * p2(-9), -14 * p2(-9)]),
    ("update/h", [2], [-0.00448, -0.00448]),
])
# Errors: a weight without its update; shapes that differ.
safetensors(os.path.join(out, "nopair.safetensors"), [
    ("weight/x", [1], [1.0]), ("update/y", [1], [1.0]),
])
safetensors(os.path.join(out, "shape.safetensors"), [
    ("weight/x", [2, 1], [1.0, 1.0]), ("update/x", [2], [1.0, 1.0]),
])
# Recipes (mxfp8-e4m3, mxfp4): blocks of ones, their updates worked out by
# hand below.
safetensors(os.path.join(out, "mx.safetensors"), [
    ("weight/m", [32], [1.0] * 32),
    ("update/m", [32], [p2(-4)] * 8 + [0.07] * 8 + [-p2(-5)] * 8 + [-0.04] * 8),
])
safetensors(os.path.join(out, "mxsteps.safetensors"), [
    ("weight/s", [2, 16], [1.0] * 32),
    ("update/s", [2, 16], [0.07] * 16 + [0.03] * 16),
])
safetensors(os.path.join(out, "mxsweep.safetensors"), [
    ("weight/w", [32], [1.0] * 32),
    ("grad/w", [32], [-1.0] * 32),
])
# Two dumps paired by name: directories of .npy files.
for d in ("w", "u", "u2"):
    os.mkdir(os.path.join(out, d))
npy(os.path.join(out, "w", "a.npy"), [1.0, 0.125])
npy(os.path.join(out, "u", "a.npy"), [p2(-11), p2(-14)])
npy(os.path.join(out, "u2", "b.npy"), [p2(-11), p2(-14)])
EOF

# check NAME EXPR: EXPR holds of the JSON in NAME.out (d: the document, t:
# the tensors by name, T: the total, H(p): 2^p).
check() {
    name=$1
    if python3 - "$tmp/$name.out" "$2" <<'EOF'
import json, struct, sys
path, expr = sys.argv[1:]
d = json.load(open(path, encoding="utf-8"))
t = {x["name"]: x for x in d["tensors"]}
T = d["total"]
H = lambda p: 2.0 ** p
F = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # v rounded to float32
if not eval("(" + expr + "\n)"):
    sys.exit("false: " + expr)
EOF
    then ok; else bad "$name: JSON check failed"; fi
}

# The facts, element by element (fp16: 11 significand bits, ulp(1) = 2^-10,
# ulp(1/8) = 2^-13; bf16: 8 bits, ulp(1) = 2^-7, ulp(1/8) = 2^-10):
#   1 + 2^-11           fp16: a tie, to even: 1, lost   bf16: lost
#   1/8 + 2^-14         fp16: a tie, to even: lost      bf16: lost
#   1 + 2^-9            fp16: exact, r = 1              bf16: below half an ulp, lost
#   1 + 2^-11 + 2^-20   fp16: up to 1 + 2^-10, r = 2^-10 / (2^-11 + 2^-20), in (3/2, 2]
#                       bf16: lost
#   1 + 2^-10           fp16: exact, r = 1              bf16: lost
# The zero update is not counted.  Kahan keeps the rounding error in the
# compensation: the pair holds w + rne(dw), so r = 1 everywhere, but in bf16
# rne(2^-11 + 2^-20) = 2^-11, r = 2^-11 / (2^-11 + 2^-20), in [3/4, 1).
# FP32 master weights hold every sum exactly.
good facts --json - --formats fp16,bf16 "$tmp/facts.safetensors"
check facts 'd["tool"] == "fpswamp" and list(d)[:2] == ["tool", "version"] and d["input"] == "update"
    and d["lr"] is None and d["steps"] == 1 and d["seeds"] == 8 and d["formats"] == ["fp16", "bf16"]'
check facts 't["a"]["count"] == 6 and t["a"]["update_nonzero"] == 5 and t["a"]["nonfinite"] == 0
    and t["a"]["weight"] == "weight/a" and t["a"]["update"] == "update/a" and t["a"]["shape"] == [6]'
check facts 't["a"]["formats"]["fp16"]["lost"] == 2 and t["a"]["formats"]["fp16"]["half_lost"] == 2
    and t["a"]["formats"]["fp16"]["lost_frac"] == 0.4
    and t["a"]["formats"]["fp16"]["ratio_hist"] == [2, 0, 0, 0, 0, 2, 0, 0, 1, 0]'
check facts 't["a"]["formats"]["bf16"]["lost"] == 5 and t["a"]["formats"]["bf16"]["half_lost"] == 5
    and t["a"]["formats"]["bf16"]["ratio_hist"] == [5, 0, 0, 0, 0, 0, 0, 0, 0, 0]'
check facts 't["a"]["formats"]["fp16"]["kahan"]["lost"] == 0
    and t["a"]["formats"]["fp16"]["kahan"]["ratio_hist"] == [0, 0, 0, 0, 0, 5, 0, 0, 0, 0]
    and t["a"]["formats"]["bf16"]["kahan"]["lost"] == 0
    and t["a"]["formats"]["bf16"]["kahan"]["ratio_hist"] == [0, 0, 0, 0, 1, 4, 0, 0, 0, 0]'
check facts 't["a"]["fp32_master"]["lost"] == 0 and t["a"]["fp32_master"]["drift_max"] == 0
    and t["a"]["fp32_master"]["ratio_hist"] == [0, 0, 0, 0, 0, 5, 0, 0, 0, 0]'
# Stochastic rounding: the exact sums are never lost, the others (ties and
# 1 + 2^-11 + 2^-20) may be, in each of the 8 seeds.
check facts 'len(t["a"]["formats"]["fp16"]["sr"]["lost"]) == 8
    and all(0 <= n <= 3 for n in t["a"]["formats"]["fp16"]["sr"]["lost"])
    and t["a"]["formats"]["fp16"]["sr"]["ratio_hist"][5] == 16'
check facts 'T["count"] == 6 and T["tensors"] == 1 and T["files"] == 1
    and T["formats"]["fp16"]["lost"] == 2 and T["formats"]["bf16"]["lost"] == 5 and d["lr_sweep"] is None'
good facts-text --formats fp16 --all "$tmp/facts.safetensors"
has facts-text '^fpswamp: 1 tensor in 1 file, 6 elements, 5 nonzero updates' \
    '^  fp16: round to nearest loses 40\.00% \(worst: a, 40\.00%\); stochastic rounding ' \
    '^  tensor +step +nonzero +rne +sr mean +sr sd +kahan +fp32$' \
    '^  a +- +5 +40\.00 +[0-9.]+ +[0-9.]+ +0 +0$' '^  total +5 +40\.00 '
# One strategy column each: no "half" column beside "lost".
if grep -q 'half' "$tmp/facts-text.out"; then bad "facts-text: a half column"; else ok; fi

# 64 steps of 1 + 2^-12 in fp16: round to nearest even never moves (drift
# -1, stuck); Kahan moves by 2^-10 every fourth step and ends exactly at
# 1 + 2^-6 (drift 0); FP32 is exact throughout; stochastic rounding moves up
# by 2^-10 with probability 1/4 each step, so its drift is unbiased: over
# 200 seeds the mean signed drift lies within 4 standard errors of 0.
good steps --json - --formats fp16 --steps 64 --seeds 200 "$tmp/steps.safetensors"
check steps 't["k"]["formats"]["fp16"]["drift_signed_mean"] == -1 and t["k"]["formats"]["fp16"]["drift_mean"] == 1
    and t["k"]["formats"]["fp16"]["stuck"] == 1 and t["k"]["formats"]["fp16"]["lost"] == 1'
check steps 't["k"]["formats"]["fp16"]["kahan"]["drift_max"] == 0 and t["k"]["formats"]["fp16"]["kahan"]["lost"] == 0
    and t["k"]["formats"]["fp16"]["kahan"]["stuck"] == 0 and t["k"]["fp32_master"]["drift_max"] == 0'
check steps 'len(t["k"]["formats"]["fp16"]["sr"]["drift_signed"]) == 200
    and t["k"]["formats"]["fp16"]["sr"]["drift_signed_sd"] > 0
    and abs(t["k"]["formats"]["fp16"]["sr"]["drift_signed_mean"])
        <= 4 * t["k"]["formats"]["fp16"]["sr"]["drift_signed_sd"] / 200 ** 0.5
    and all(abs(v * 16 - round(v * 16)) == 0 for v in t["k"]["formats"]["fp16"]["sr"]["drift_signed"])'
good steps-text --formats fp16 --steps 64 --seeds 4 --all "$tmp/steps.safetensors"
has steps-text '^fp16, the mean drift ' '^  k +- +1 +100\.00 .* +0 +0$' \
    'After 64 steps the weights' \
    'Best short of FP32 master weights: Kahan\.$'
# Singulars: one element, one nonzero update, one seed.
good one --formats fp16 --seeds 1 "$tmp/steps.safetensors"
has one '^fpswamp: 1 tensor in 1 file, 1 element, 1 nonzero update; dw = the update; 1 step; SR over 1 seed$' \
    '\(mean of 1 seed\)' '^The one tensor, by the share of updates lost with round to nearest:$'
if grep -Eq '(^|[^0-9.])1 (elements|updates|nonzero updates|seeds|steps|tensors|files)' "$tmp/one.out"; then
    bad "one: a plural after 1"
else
    ok
fi

# More than half but not all: half_lost 1, lost 0 under RNE in e4m3, and
# the text says so once, in the summary.
good half --json - --formats e4m3 "$tmp/half.safetensors"
check half 't["h"]["formats"]["e4m3"]["lost"] == 0 and t["h"]["formats"]["e4m3"]["half_lost"] == 1
    and t["h"]["formats"]["e4m3"]["ratio_hist"] == [0, 0, 1, 0, 1, 0, 0, 0, 0, 0]'
good half-text --formats e4m3 "$tmp/half.safetensors"
has half-text '^  More than half but not all of an update is lost only where w \+ dw crosses a power of two,' \
    'e4m3: 1 \(rne\)'
good facts-nohalf --formats fp16 "$tmp/facts.safetensors"
if grep -q 'More than half' "$tmp/facts-nohalf.out"; then bad "facts: a half-lost line with none"; else ok; fi

# Updates from gradients: -1/8 * -2^-8 = 2^-11 (a tie in fp16, lost) and
# 2^-9 (kept in fp16, lost in bf16).
good grads --json - --formats fp16,bf16 --lr 0.125 "$tmp/grads.safetensors"
check grads 'd["input"] == "gradient" and d["lr"] == 0.125 and t["g"]["update"] == "grad/g"
    and t["g"]["formats"]["fp16"]["lost"] == 1 and t["g"]["formats"]["bf16"]["lost"] == 2'

# The sweep from 2^-14 to 2^-6, nine powers of two: fp16 loses 1 + lr up to
# lr = 2^-11 (a tie), bf16 up to 2^-8 (a tie), e5m2 (ulp(1) = 2^-2) all.
good sweep --json - --formats fp16,bf16,e5m2 --lr-sweep 0.00006103515625:0.015625:9 "$tmp/sweep.safetensors"
check sweep 'd["lr_sweep"] == [H(-14 + i) for i in range(9)] and T["formats"] is None
    and [p["fp16"]["lost"] for p in t["s"]["lr_sweep"]] == [1, 1, 1, 1, 0, 0, 0, 0, 0]
    and [p["bf16"]["lost"] for p in t["s"]["lr_sweep"]] == [1] * 7 + [0, 0]
    and [p["e5m2"]["lost"] for p in T["lr_sweep"]] == [1] * 9'
good sweep-text --formats fp16 --lr-sweep 0.00006103515625:0.015625:9 "$tmp/sweep.safetensors"
has sweep-text '^ +6\.10352e-05 +100$' '^ +0\.015625 +0$'

# Two dumps paired by name.
good two --json - --formats fp16 --weights "$tmp/w" --updates "$tmp/u"
check two 't["a.npy"]["formats"]["fp16"]["lost"] == 2 and T["update_nonzero"] == 2'

# Recipes storing the weights (fpswamp(1), RECIPES), worked out by hand.
# mxfp8-e4m3 on a block of 32 ones: the scale is 2^k, k = floor(log2 1) -
# emax(e4m3) = -8, and stays so while every sum is in [1, 2); a stored
# value is 2^-8 times an e4m3 value, so the grid is 2^-4 apart below 1 and
# 2^-3 apart from 1 to 2.  1 + 2^-4 = 272 * 2^-8 is a tie between 256 and
# 288, to the even 256: lost; 1 + 0.07 (273.92) goes to 288, 1.125, r =
# 0.125 / 0.07 = 1.79; 1 - 2^-5 (248) ties between 240 and 256, to the even
# 256: lost; 1 - 0.04 (245.76) goes to 240, 0.9375, r = 0.0625 / 0.04 =
# 1.56.  So 16 lost and 16 in (3/2, 2].  mxfp4: k = 0 - 2 = -2, the grid
# 1/4 times e2m1's, 4 and 6 around 4 x 1: 4.25, 4.28, 3.875 and 3.84 all
# go back to 4: 32 lost.
good mx --json - --formats fp16 --recipes mxfp8-e4m3,mxfp4 "$tmp/mx.safetensors"
check mx 'd["recipes"] == [{"name": "mxfp8-e4m3", "recipe": "e4m3/e8m0/floor/1x32"},
                           {"name": "mxfp4", "recipe": "e2m1/e8m0/floor/1x32"}]
    and t["m"]["recipes"]["mxfp8-e4m3"]["lost"] == 16 and t["m"]["recipes"]["mxfp8-e4m3"]["half_lost"] == 16
    and t["m"]["recipes"]["mxfp8-e4m3"]["ratio_hist"] == [16, 0, 0, 0, 0, 0, 0, 0, 16, 0]
    and t["m"]["recipes"]["mxfp4"]["lost"] == 32 and t["m"]["recipes"]["mxfp4"]["stuck"] == 32
    and T["recipes"]["mxfp4"]["lost_frac"] == 1 and t["m"]["fp32_master"]["lost"] == 0
    and list(t["m"])[-4:] == ["fp32_master", "formats", "recipes", "lr_sweep"]'
good mx-text --formats fp16 --recipe mxfp8-e4m3 "$tmp/mx.safetensors"
has mx-text '^  mxfp8-e4m3 \(stored per tensor, e4m3/e8m0/floor/1x32\): loses 50\.00% \(worst: m, 50\.00%\);' \
    '^The one tensor, stored under the recipe, by the share of updates lost:$' \
    '^  tensor +step +nonzero +mxfp8-e4m3$' '^  m +- +32 +50\.00$'
# Without recipes the JSON says so.
check facts 'd["recipes"] == [] and t["a"]["recipes"] == {}'
# Four steps of 0.07 on a row of 16 ones (a block of 1 x 16: the view's
# rows are 16 long): 1.07 -> 1.125, 1.195 (305.92 * 2^-8) -> 1.25, 1.32
# (337.92) -> 1.375, 1.445 (369.92) -> 1.5, against the exact 1 + 4 x
# 0.07 = 1.28; the other row's 0.03 is lost at every step (1.03 is 263.68
# * 2^-8, back to 256): drift -1, stuck.
good mxsteps --json - --formats fp16 --recipe mxfp8-e4m3 --steps 4 "$tmp/mxsteps.safetensors"
check mxsteps 't["s"]["recipes"]["mxfp8-e4m3"]["lost"] == 16 and t["s"]["recipes"]["mxfp8-e4m3"]["stuck"] == 16
    and t["s"]["recipes"]["mxfp8-e4m3"]["drift_max"] == 1
    and abs(t["s"]["recipes"]["mxfp8-e4m3"]["drift_signed_mean"]
            - (-1 + (0.5 - 4 * F(0.07)) / (4 * F(0.07))) / 2) < 1e-12'
good mxsteps-text --formats fp16 --recipe mxfp8-e4m3 --steps 4 --all "$tmp/mxsteps.safetensors"
has mxsteps-text 'After 4 steps the stored weights are off the exact sum by' \
    '^mxfp8-e4m3 \(stored per tensor\), the mean drift ' '^  s +- +32 +50\.00 +0$'
# The sweep: dw = lr from gradients of -1, lr = 2^-6 .. 2^-2: 1 + 2^-6,
# 1 + 2^-5 and 1 + 2^-4 (a tie) go back to 1, 1.125 and 1.25 are on the
# grid.
good mxsweep --json - --formats fp16 --recipe mxfp8-e4m3 --lr-sweep 0.015625:0.25:5 "$tmp/mxsweep.safetensors"
check mxsweep '[p["recipes"]["mxfp8-e4m3"]["lost"] for p in t["w"]["lr_sweep"]] == [32, 32, 32, 0, 0]
    and T["recipes"] is None and all(set(p) == {"fp16", "recipes"} for p in T["lr_sweep"])'
good mxsweep-text --formats fp16 --recipe mxfp8-e4m3 --lr-sweep 0.015625:0.25:5 "$tmp/mxsweep.safetensors"
has mxsweep-text '^  mxfp8-e4m3: 100% lost at lr 0\.015625, 0 at lr 0\.25; half or more up to lr 0\.0625\.$' \
    '^The same, the weights stored under the recipes:$' '^ +lr +mxfp8-e4m3$' '^ +0\.0625 +100$' \
    '^ +0\.125 +0$'

# The bundled sample under five recipes against tests/recipes_numpy.py, a
# NumPy model of them: per tensor W0 = Q(w), W1 = Q(float32(W0 + dw)),
# and the counts of lost, more than half lost and the ratio bins, the
# ratios taken exactly.
if have_modules numpy; then
    good sample-recipes --json - --formats fp16 --seeds 1 \
        --recipes nvfp4,mxfp8-e4m3,mxfp4,fp8-block128,fp8-tensor-current "$sample/step-000300.safetensors"
    if "$py" - "$srcdir/tests" "$tmp/sample-recipes.out" "$sample/step-000300.safetensors" <<'EOF'; then ok; else bad "sample-recipes: NumPy disagrees"; fi
import json, sys
from fractions import Fraction
import numpy as np
sys.path.insert(0, sys.argv[1])
import recipes_numpy as rn
d = json.load(open(sys.argv[2]))
got = {x["name"]: x["recipes"] for x in d["tensors"]}
tensors = dict(rn.read_safetensors(sys.argv[3]))
def bin_of(e, dw):
    if e == 0:
        return 0
    r = e / dw
    for b, lim in enumerate((Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), 1), 1):
        if r < lim:
            return b
    if r == 1:
        return 5
    for b, lim in enumerate((Fraction(5, 4), Fraction(3, 2), 2), 6):
        if r <= lim:
            return b
    return 9
n = 0
for name, (fn, _) in rn.RECIPES.items():
    for p, rec in got.items():
        w = rn.view(tensors["weight/" + p])
        u = rn.view(tensors["update/" + p])
        w0 = fn(w)[0]
        w1 = fn((w0 + u).astype(np.float32))[0]
        hist = [0] * 10
        for a, b, du in zip(w0.ravel(), w1.ravel(), u.ravel()):
            if du != 0:
                hist[bin_of(abs(Fraction(float(b)) - Fraction(float(a))), abs(Fraction(float(du))))] += 1
        g = rec[name]
        if g["ratio_hist"] != hist or g["lost"] != hist[0] or g["half_lost"] != sum(hist[:3]):
            sys.exit("%s under %s: fpswamp %s, NumPy %s" % (p, name, g["ratio_hist"], hist))
        n += 1
print("sample-recipes: %d tensors x recipes agree with NumPy" % n)
EOF
    # The summary's sentence on NVFP4 is the JSON's.
    good sample-recipes-text --formats fp16 --recipe nvfp4 "$sample/step-000300.safetensors"
    if python3 - "$tmp/sample-recipes-text.out" "$tmp/sample-recipes.out" <<'EOF'; then ok; else bad "sample-recipes-text: the summary and the JSON disagree"; fi
import json, re, sys
text = re.sub(r"\n    ", " ", open(sys.argv[1]).read())
T = json.load(open(sys.argv[2]))["total"]
R, n = T["recipes"]["nvfp4"], T["update_nonzero"]
pct = lambda f: "0" if f == 0 else "100%" if f == 1 else "%.2f%%" % (100 * f)
want = ("nvfp4 (stored per tensor, e2m1/e4m3/nvfp4/1x16): keeps %s of the updates (moved by half to "
        "twice the update); loses %s" % (pct(sum(R["ratio_hist"][3:9]) / n), pct(R["lost_frac"])))
assert want in text, want
assert ("more than half in %s, and %s move by more than twice theirs as the scales change"
        % (pct(R["half_lost_frac"]), pct(R["ratio_hist"][9] / n))) in text
EOF
else
    skipped "recipes against NumPy (needs python3 with numpy)"
fi

# Errors.
error nopair 2 'weight/x has no update/x' "$tmp/nopair.safetensors"
error shape 2 'weight/x has shape \[2, 1\] but update/x .* has shape \[2\]' "$tmp/shape.safetensors"
error format 2 'unknown format "fp17"' --formats fp16,fp17 "$tmp/facts.safetensors"
error twice 2 'fp16 is named twice' --formats fp16,binary16 "$tmp/facts.safetensors"
error nozero 2 "option --formats: e8m0 has no zero for Kahan's compensation" --formats e8m0 "$tmp/facts.safetensors"
error names 2 'tensor a.npy has no tensor of that name' --weights "$tmp/w" --updates "$tmp/u2"
error half 2 'go together' --weights "$tmp/w"
error both 2 'not both' --weights "$tmp/w" --updates "$tmp/u" "$tmp/facts.safetensors"
error nolr 2 'weight/a has no grad/a to pair with' --lr 0.1 "$tmp/facts.safetensors"
error match 2 'match --match' --match '^zzz' "$tmp/facts.safetensors"
error sweep-syntax 2 'is not LO:HI:N' --lr-sweep 0.1:1 "$tmp/sweep.safetensors"
error sweep-order 2 'LO must be below HI' --lr-sweep 1:0.1:3 "$tmp/sweep.safetensors"
error sweep-steps 2 'need --lr' --lr-sweep 0.1:1:3 --steps 4 "$tmp/sweep.safetensors"
error lr 2 'not a finite positive number' --lr -1 "$tmp/grads.safetensors"
error steps 2 'not an integer' --steps 0 "$tmp/facts.safetensors"
error missing 2 'facts.nope' "$tmp/facts.nope"
error ext 2 'must end in .png or .svg' --plot "$tmp/x.pdf" "$tmp/facts.safetensors"
error option 2 'unknown option' --frobnicate "$tmp/facts.safetensors"
error recipe 2 'option --recipe: recipe "nvfp5": expected' --recipe nvfp5 "$tmp/facts.safetensors"
error recipe-rht 2 'recipe nvfp4-rht transforms its input \(rht\)' --recipes nvfp4,nvfp4-rht "$tmp/facts.safetensors"
# An output is never an input, paired or not: a lone .npy beside the
# pairs, a dump --match leaves out.
mkdir "$tmp/lone"
cp "$tmp/facts.safetensors" "$tmp/w/a.npy" "$tmp/lone/"
cp "$tmp/steps.safetensors" "$tmp/lone/other.safetensors" # weight/k, update/k
sum_before=$(cksum "$tmp/lone/a.npy" "$tmp/lone/other.safetensors")
error lone 2 'a\.npy: is an input; fpswamp does not write over its inputs' --json "$tmp/lone/a.npy" "$tmp/lone"
error unmatched 2 'other\.safetensors: is an input' --match '^a$' --json "$tmp/lone/other.safetensors" \
    "$tmp/lone/facts.safetensors" "$tmp/lone/other.safetensors"
if [ "$(cksum "$tmp/lone/a.npy" "$tmp/lone/other.safetensors")" = "$sum_before" ]; then
    ok
else
    bad "an input was changed"
fi
run noargs
if [ "$(cat "$tmp/noargs.rc")" -eq 2 ] && grep -q '^usage: fpswamp' "$tmp/noargs.err"; then ok; else bad "no arguments: no usage"; fi
good help --help
has help '^usage: fpswamp '
good version --version
has version '^fpswamp \(fpkit [0-9]'

# The bundled sample: a table, valid JSON whose total is the sum of its
# tensors, and (with gnuplot) a plot of the requested size.
good sample "$sample/step-000300.safetensors"
has sample '^fpswamp: 8 tensors in 1 file \(step 300\), 4794 elements' '^  fp16: ' '^  e5m2: ' \
    '^All 8 tensors, worst first, by the mean share of updates lost with round to nearest:$'
good sample-json --json - "$sample"
check sample-json 'len(d["tensors"]) == 32 and T["files"] == 4
    and T["update_nonzero"] == sum(x["update_nonzero"] for x in d["tensors"])
    and all(T["formats"][f]["lost"] == sum(x["formats"][f]["lost"] for x in d["tensors"])
            and sum(T["formats"][f]["ratio_hist"]) + T["formats"][f]["overflow"] == T["update_nonzero"]
            for f in d["formats"])
    and T["fp32_master"]["lost"] == 0
    and [x["step"] for x in d["tensors"]] == [0] * 8 + [50] * 8 + [300] * 8 + [919] * 8
    and list(d["tensors"][0])[:7] == ["name", "weight", "update", "file", "update_file", "step", "shape"]'

# The text on the sample: no line wider than 100 columns, with or without
# --all, with several steps replayed, with a sweep.
for args in "" "--all" "--steps 3 --seeds 2 --all" "--lr 0.01 --lr-sweep 1e-4:1:5 --all" \
    "--formats fp16,bf16,e4m3,e5m2,e3m2,e2m3,tf32 --all" \
    "--recipes nvfp4,mxfp8-e4m3,mxfp4,e4m3/fp32/amax/1x128,margin=1 --steps 2 --seeds 1 --all" \
    "--recipes standard --lr 0.01 --lr-sweep 1e-4:1:3 --seeds 1 --all"; do
    name=wide$(printf '%s' "$args" | tr -c 'a-z0-9' '_')
    # shellcheck disable=SC2086 # a list of options
    good "$name" $args "$sample"
    fits "$name"
done
# --top N rows, none with --top 0; the full tables only with --all.
good top3 --top 3 "$sample"
good top0 --top 0 "$sample"
rows() { # rows NAME RE: the rows of the table under the line matching RE
    awk -v h="$2" 'f && /^$/ {f=0} f && /^  [^ ]/ && !/^  tensor / {n++} $0 ~ h {f=1} END {print n + 0}' "$tmp/$1.out"
}
if [ "$(rows top3 '^Worst 3 of 32 tensors')" = 3 ] && ! grep -q '^Worst\|^All ' "$tmp/top0.out" &&
    [ "$(rows wide__all '^fp16, the share of nonzero updates lost')" = 33 ] &&
    ! grep -q '^fp16, the share' "$tmp/top3.out"; then
    ok
else
    bad "--top 3, --top 0 or --all: wrong rows"
fi
# The summary's numbers, the worst tensors and the steps are the JSON's.
good agree "$sample"
if python3 - "$tmp/agree.out" "$tmp/sample-json.out" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
T, rows = d["total"], d["tensors"]
def pct(f):  # as the text writes a share
    return "0" if f == 0 else "100%" if f == 1 else "%.2f%%" % (100 * f)
summary = re.sub(r"\n    ", " ", text.split("\nSummary:", 1)[1].split("\n\n", 1)[0])
for f in d["formats"]:
    F = T["formats"][f]
    w = max(rows, key=lambda x: (x["formats"][f]["lost_frac"] or 0, x["formats"][f]["lost"]))
    want = ("%s: round to nearest loses %s (worst: %s at step %d, %s); stochastic rounding %s "
            "(mean of %d seeds), Kahan-compensated weights %s, FP32 master weights %s." % (
                f, pct(F["lost_frac"]), w["name"], w["step"], pct(w["formats"][f]["lost_frac"]),
                pct(F["sr"]["lost_frac_mean"]), d["seeds"], pct(F["kahan"]["lost_frac"]),
                pct(T["fp32_master"]["lost_frac"])))
    assert want in summary, (want, summary)
    part = F["half_lost"] - F["lost"]
    assert (("%s: %d (rne)" % (f, part)) in summary) == (part > 0), f
# the worst tensors: the largest mean lost share over the formats
mean = lambda x: sum(x["formats"][f]["lost_frac"] for f in d["formats"]) / len(d["formats"])
ranked = sorted(rows, key=mean, reverse=True)[:10]
table = text.split("\nWorst ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
got = [(l.split()[0], int(l.split()[1]), l.split()[3:]) for l in table]
assert [(g[0], g[1]) for g in got] == [(x["name"], x["step"]) for x in ranked], got
for g, x in zip(got, ranked):
    assert g[2] == [pct(x["formats"][f]["lost_frac"]).rstrip("%") for f in d["formats"]], g
# by step: the lost counts over the step's tensors
table = text.split("\nBy step, ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
for l in table:
    step, nz, *p = l.split()
    at = [x for x in rows if x["step"] == int(step)]
    assert int(nz) == sum(x["update_nonzero"] for x in at)
    assert p == [pct(sum(x["formats"][f]["lost"] for x in at) / int(nz)).rstrip("%")
                 for f in d["formats"]], l
EOF
then ok; else bad "agree: the summary and the JSON disagree"; fi
if [ "$have_gnuplot" = yes ]; then
    good plot --quiet --plot "$tmp/bars.png" --plot-size 640x400 "$sample/step-000000.safetensors"
    if [ "$(png_size "$tmp/bars.png")" = 640x400 ]; then ok; else bad "plot: not a 640x400 PNG"; fi
    good plot-sweep --quiet --plot "$tmp/sweep.svg" --lr-sweep 1e-4:1:5 "$sample/step-000000.safetensors"
    if grep -q '<svg' "$tmp/sweep.svg"; then ok; else bad "plot-sweep: not an SVG"; fi
    FPKIT_PLOTDIR=$tmp/none error plot-script 3 'cannot read the plot script' --plot "$tmp/x.png" "$tmp/facts.safetensors"
else
    skipped "plots (gnuplot not installed)"
fi

# The man page: clean under mandoc's lint, its SYNOPSIS the usage lines, and
# every example runs on the bundled sample (pipes skipped).
if command -v mandoc >/dev/null 2>&1; then
    if [ -z "$(mandoc -Tlint -Wwarning "$manpage" 2>&1)" ]; then ok; else bad "mandoc -Tlint $manpage"; fi
else
    skipped "man page lint (mandoc not installed)"
fi
synopsis "$manpage" "$tmp/help.out"
fpswamp_abs=$(cd "$(dirname "$FPSWAMP")" && pwd)/$(basename "$FPSWAMP")
sample_abs=$(cd "$sample" && pwd)
mkdir -p "$tmp/ex/tests/data"
ln -s "$sample_abs" "$tmp/ex/tests/data/sample"
cp -R "$tmp/w" "$tmp/ex/weights"
cp -R "$tmp/u" "$tmp/ex/updates"
nex=0
sed -n 's/^\.Dl fpswamp //p' "$manpage" | sed 's/\\-/-/g' >"$tmp/examples"
while IFS= read -r line; do
    case $line in
    *'|'*) continue ;;
    *--plot*) [ "$have_gnuplot" = yes ] || { skipped "example needs gnuplot: fpswamp $line"; continue; } ;;
    esac
    nex=$((nex + 1))
    rc=0
    # shellcheck disable=SC2034 # read by the eval
    (cd "$tmp/ex" && eval "\"\$fpswamp_abs\" $line") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/ex.err" ]; then
        ok
    else
        bad "man page example: fpswamp $line: status $rc: $(head -n 2 "$tmp/ex.err")"
    fi
done <"$tmp/examples"
if [ "$nex" -ge 4 ]; then ok; else bad "$manpage: only $nex examples run"; fi

# No temporary file is left beside the outputs.
left=$(find "$tmp" -name '.*.??????' | head -n 3)
if [ -z "$left" ]; then ok; else bad "temporary files left: $left"; fi

# --threads: the same JSON with 1, 2 and 3 threads (tensors shared out,
# reported in the files' order), with recipes too.
for n in 1 2 3; do
    good "thr$n" --quiet --json - --seeds 2 --threads "$n" "$sample"
    good "rthr$n" --quiet --json - --seeds 1 --formats e4m3 --recipes nvfp4-sr,fp8-tensor-delayed \
        --steps 3 --threads "$n" "$sample"
done
if cmp -s "$tmp/thr1.out" "$tmp/thr2.out" && cmp -s "$tmp/thr1.out" "$tmp/thr3.out" &&
    cmp -s "$tmp/rthr1.out" "$tmp/rthr2.out" && cmp -s "$tmp/rthr1.out" "$tmp/rthr3.out"; then
    ok
else
    bad "--threads 2 or 3 changed the JSON"
fi
threads_by_default thrdef --quiet --seeds 2 "$sample" # (the CPUs it may run on)
error threads0 2 'option --threads: "0" is not an integer from 1 to 1024' --threads 0 "$sample"

summary
