#!/bin/sh
# fpgrad on synthetic dumps whose answers are known exactly: values at, just
# below and just above every format's underflow, subnormal and overflow
# thresholds (expected classes written by hand from docs/DESIGN.md "Thresholds",
# never computed by fpkit), --scale S and --scale auto on crafted tensors,
# --match, the JSON and CSV, a directory of two halves against the whole
# file, the error cases, the plot (PNG dimensions) and --report.  With numpy,
# random tensors are also checked against numpy's own comparisons.
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.  Parts that need numpy or gnuplot are reported as skipped
# when those are missing.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
manpage=$srcdir/man/fpgrad.1
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
need_python
have_numpy=no
numpy_python=
if have_modules numpy; then
    have_numpy=yes
    numpy_python=$py
fi

# The data, and what fpgrad must find in it (expect.json).
python3 - "$tmp" <<'EOF'
import json, math, os, random, struct, sys

out = sys.argv[1]
p2 = lambda e: math.ldexp(1.0, e)
up = lambda x: x * (1 + p2(-52))          # the next double above x > 0

def npy(path, values, descr="<f8", shape=None):
    code = {"<f8": "d", "<f4": "f", "<f2": "e"}[descr]
    data = struct.pack("<%d%s" % (len(values), code), *values)
    shape = tuple(shape) if shape is not None else (len(values),)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)

def safetensors(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    for name, shape, values in tensors:
        b = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

def log2floor(x):
    return math.frexp(abs(x))[1] - 1

# Value and its class in fp16, bf16, e4m3, e5m2 under RNE: Z rounds to zero,
# S to a subnormal, N to a normal, O overflows.  From docs/DESIGN.md "Thresholds": fp16 rounds
# |x| <= 2^-25 to 0 and |x| >= 65520 to inf, min normal 2^-14; e4m3 <= 2^-10
# to 0, > 464 overflows, min normal 2^-6; e5m2 <= 2^-17 to 0, >= 61440 to
# inf, min normal 2^-14; bf16 <= 2^-134 to 0, min normal 2^-126, max
# 2^128 - 2^120 (so 2^128 - 2^119 ties to inf).
T = [
    (p2(-26), "ZNZZ"),
    (p2(-25), "ZNZZ"),
    (up(p2(-25)), "SNZZ"),
    (p2(-24), "SNZZ"),
    (p2(-17), "SNZZ"),
    (up(p2(-17)), "SNZS"),
    (p2(-14) - p2(-30), "NNZN"),
    (p2(-14) - p2(-24), "SNZN"),
    (p2(-10), "NNZN"),
    (up(p2(-10)), "NNSN"),
    (p2(-7), "NNSN"),
    (p2(-6), "NNNN"),
    (1.0, "NNNN"),
    (448.0, "NNNN"),
    (464.0, "NNNN"),
    (465.0, "NNON"),
    (57344.0, "NNON"),
    (61439.0, "NNON"),
    (61440.0, "NNOO"),
    (65504.0, "NNOO"),
    (65519.0, "NNOO"),
    (65520.0, "ONOO"),
    (p2(-134), "ZZZZ"),
    (up(p2(-134)), "ZSZZ"),
    (p2(-127), "ZSZZ"),
    (p2(128) - p2(119) - p2(76), "ONOO"),
    (p2(128) - p2(119), "OOOO"),
    (-p2(-25), "ZNZZ"),
    (-465.0, "NNON"),
    (-65520.0, "ONOO"),
    (-up(p2(-10)), "NNSN"),
]
FMTS = ["fp16", "bf16", "e4m3", "e5m2"]
specials = [0.0, -0.0, float("inf"), float("-inf"), float("nan")]
values = [v for v, _ in T]
npy(os.path.join(out, "thr.npy"), values[:10] + specials + values[10:])

def expect_counts(table):
    e = {}
    for i, f in enumerate(FMTS):
        c = [cls[i] for _, cls in table]
        e[f] = {"underflow": c.count("Z"), "subnormal": c.count("S"), "overflow": c.count("O")}
    return e

hist = {}
for v, _ in T:
    hist[log2floor(v)] = hist.get(log2floor(v), 0) + 1
lo, hi = min(hist), max(hist)
expect = {
    "thr": {
        "count": len(T) + len(specials), "zeros": 2, "nonfinite": 3, "nonzero": len(T),
        "amax": max(abs(v) for v in values),
        "hist_min": lo, "hist": [hist.get(e, 0) for e in range(lo, hi + 1)],
        "formats": expect_counts(T),
        # under RTZ, fp16: |x| < 2^-24 becomes 0, |x| >= 65536 overflows
        "rtz_fp16": {"underflow": sum(0 < abs(v) < p2(-24) for v in values),
                     "overflow": sum(abs(v) >= 65536 for v in values)},
    }
}

# --scale 1024 (fp16): 2^-35 -> 2^-25 (0); 2^-34 -> 2^-24 (subnormal);
# 63.96875 -> 65504; 64 -> 65536 (inf); 2^-24 -> 2^-14 (normal).
npy(os.path.join(out, "scale.npy"), [p2(-35), p2(-34), 63.96875, 64.0, p2(-24)], "<f4")
# --scale 3 (not a power of two): 21840 * 3 = 65520 overflows, and
# 21839.998046875 * 3 = 65519.994140625 rounds to 65504.
npy(os.path.join(out, "scale3.npy"), [21840.0, 21839.998046875], "<f4")

# --scale auto.  a: amax 1, loss scale 2^15, e4m3 2^8, e5m2 2^15.
# b: amax 65519, loss 2^0, e4m3 2^-8 (65519/256 <= 448 < 65519/128),
# e5m2 2^-1.  c: amax 65520, loss 2^-1.  d: amax 3, loss 2^14, e4m3 2^7,
# e5m2 2^14.  Global amax 65520: loss 2^-1.
os.mkdir(os.path.join(out, "auto"))
npy(os.path.join(out, "auto", "a.npy"), [1.0, p2(-40), p2(-24)], "<f4")
npy(os.path.join(out, "auto", "b.npy"), [65519.0], "<f4")
npy(os.path.join(out, "auto", "c.npy"), [65520.0, 0.0], "<f4")
npy(os.path.join(out, "auto", "d.npy"), [-3.0, 0.75], "<f4")

# Names with control characters.
safetensors(os.path.join(out, "odd.safetensors"), [("line\nbreak", [1], [4.0]), ("tab\there", [1], [5.0])])

# A safetensors dump as fpkit_dump.py writes it.
safetensors(os.path.join(out, "step.safetensors"), [
    ("actgrad/fc1", [2, 3], [p2(-30), p2(-20), 1.0, 0.0, -p2(-26), 2.0]),
    ("grad/fc1.bias", [3], [p2(-26), p2(-10), 0.5]),
    ("grad/fc1.weight", [3, 2], [p2(-25), p2(-24), 1.0, -2.0, 0.0, 100000.0]),
    ("weight/fc1.weight", [3, 2], [0.5, -0.25, 0.125, 1.0, 2.0, 3.0]),
], {"step": "100", "loss": "0.25", "loss_scale": "65536"})

# Two halves and the whole, log-uniform magnitudes over 2^-140 .. 2^20.
rnd = random.Random(7)
def draw():
    r = rnd.random()
    if r < 0.02:
        return 0.0
    return rnd.choice((-1, 1)) * 2.0 ** rnd.uniform(-140, 20)
whole = [struct.unpack("<f", struct.pack("<f", draw()))[0] for _ in range(20000)]
npy(os.path.join(out, "whole.npy"), whole, "<f4", (100, 200))
os.mkdir(os.path.join(out, "halves"))
npy(os.path.join(out, "halves", "a.npy"), whole[:7000], "<f4")
npy(os.path.join(out, "halves", "b.npy"), whole[7000:], "<f4")

# Many small tensors: the report's small multiples stop at 64.
safetensors(os.path.join(out, "many.safetensors"),
            [("t%02d" % i, [4], [p2(-i), 1.0, 0.0, -p2(-2 * i)]) for i in range(66)])

# Broken dumps.
os.mkdir(os.path.join(out, "bad"))
with open(os.path.join(out, "bad", "garbage.npy"), "wb") as f:
    f.write(b"this is not a dump at all\n")
npy(os.path.join(out, "bad", "short.npy"), [1.0] * 100, "<f8")
with open(os.path.join(out, "bad", "short.npy"), "r+b") as f:
    f.truncate(os.path.getsize(f.name) - 8)
os.mkdir(os.path.join(out, "empty"))

with open(os.path.join(out, "expect.json"), "w") as f:
    json.dump(expect, f)
EOF




# check NAME PYTHON: the Python expression is true, over d (the JSON of
# $tmp/NAME.out), e (expect.json), t (d's tensors by name), T (d's total),
# F(x) (x["formats"] as {format: (underflow, subnormal, overflow)}), tmp.
check() {
    name=$1
    if python3 - "$tmp" "$tmp/$name.out" "$2" <<'EOF'
import json, os, sys
tmp, path, expr = sys.argv[1:]
with open(path, encoding="utf-8") as f:
    d = json.load(f)
e = json.load(open(os.path.join(tmp, "expect.json")))
t = {x["name"]: x for x in d["tensors"]}
T = d["total"]
def F(x):
    return {k: (v["underflow"], v["subnormal"], v["overflow"]) for k, v in x["formats"].items()}
if not eval("(" + expr + "\n)"):
    sys.exit("false: " + expr)
EOF
    then
        ok
    else
        bad "$name: JSON check failed"
    fi
}


# The inputs made above, and their checksums.
inputs() {
    (cd "$tmp" && find . -path ./ex -prune -o \( -name '*.npy' -o -name '*.safetensors' \) \
        ! -name np.npy -print | sort | xargs cksum)
}
sums_before=$(inputs)

# Thresholds: every format's counts, the histogram and amax, exactly.
good thr --json - "$tmp/thr.npy"
check thr 'T["count"] == e["thr"]["count"] and T["zeros"] == 2 and T["nonfinite"] == 3
    and T["nonzero_finite"] == e["thr"]["nonzero"] and T["amax"] == e["thr"]["amax"]
    and T["log2_hist"] == {"min": e["thr"]["hist_min"], "counts": e["thr"]["hist"]}
    and T["log2_min"] == e["thr"]["hist_min"]
    and T["log2_max"] == e["thr"]["hist_min"] + len(e["thr"]["hist"]) - 1
    and {f: (c["underflow"], c["subnormal"], c["overflow"]) for f, c in e["thr"]["formats"].items()} == F(T)
    and t["thr.npy"]["formats"] == T["formats"]'
# Outputs that are not regular files: a FIFO (as /dev/null or a pipe)
# is written in place and stays a FIFO, never replaced by a file; a
# symbolic link keeps pointing at its file, which gets the output.
mkfifo "$tmp/out.fifo"
timeout 60 cat "$tmp/out.fifo" >"$tmp/fifo.json" &
reader=$!
good fifo --quiet --json "$tmp/out.fifo" "$tmp/thr.npy"
wait "$reader"
if [ -p "$tmp/out.fifo" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/fifo.json"; then
    ok
else
    bad "--json into a FIFO: replaced, or no JSON came through"
fi
rm -f "$tmp/out.fifo"
# (real.json exists; made.json, which a dangling link names, is created)
echo old >"$tmp/real.json"
for target in real.json made.json; do
    ln -s "$target" "$tmp/link.json"
    good "link-$target" --quiet --json "$tmp/link.json" "$tmp/thr.npy"
    if [ -L "$tmp/link.json" ] && [ "$(readlink "$tmp/link.json")" = "$target" ] &&
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/$target"; then
        ok
    else
        bad "--json through a symbolic link to $target: the link was replaced, or its file not written"
    fi
    rm -f "$tmp/link.json" "$tmp/$target"
done

# --no-sqnr: the same counts without the SQNR (no key, no line).
good nosqnr --no-sqnr --json - "$tmp/thr.npy"
check nosqnr 'F(T) == F(json.load(open(os.path.join(tmp, "thr.out")))["total"])
    and all("sqnr_db" not in c for x in d["tensors"] + [T] for c in x["formats"].values())'
good nosqnr-text --no-sqnr "$tmp/thr.npy"
if grep -q SQNR "$tmp/nosqnr-text.out"; then bad "--no-sqnr printed an SQNR line"; else ok; fi
check thr 'd["tool"] == "fpgrad" and d["round"] == "rne" and d["scale"] == 1 and d["auto"] is None
    and d["formats"] == ["fp16", "bf16", "e4m3", "e5m2"] and len(d["tensors"]) == 1
    and list(d) == ["tool", "version", "round", "scale", "auto", "formats", "tensors", "steps",
        "total"] and d["steps"] == []
    and list(d["tensors"][0]) == ["name", "file", "step", "dtype", "shape", "loss_scaled", "scale",
        "count", "zeros", "nonfinite", "nonzero_finite", "amax", "log2_min", "log2_max",
        "log2_median", "log2_hist", "formats", "auto"]
    and t["thr.npy"]["step"] is None and t["thr.npy"]["loss_scaled"] and t["thr.npy"]["scale"] == 1
    and list(T["formats"]["fp16"]) == ["underflow", "subnormal", "overflow", "underflow_frac",
        "subnormal_frac", "overflow_frac", "underflow_frac_all", "subnormal_frac_all", "overflow_frac_all",
        "sqnr_db"]
    and t["thr.npy"]["dtype"] == "f64" and t["thr.npy"]["shape"] == [36]
    and t["thr.npy"]["file"].endswith("thr.npy")
    and all(abs(c["underflow_frac"] - c["underflow"] / T["nonzero_finite"]) < 1e-15
            and abs(c["overflow_frac_all"] - c["overflow"] / T["count"]) < 1e-15
            for c in T["formats"].values())'
good thr-rtz --json - --round rtz --formats fp16 "$tmp/thr.npy"
check thr-rtz 'd["round"] == "rtz" and list(T["formats"]) == ["fp16"]
    and T["formats"]["fp16"]["underflow"] == e["thr"]["rtz_fp16"]["underflow"]
    and T["formats"]["fp16"]["overflow"] == e["thr"]["rtz_fp16"]["overflow"]'

# The text: the verdict per format, the tensors that lose most; with
# --all a row of every tensor and the total in each table.
good thr-text "$tmp/thr.npy"
has thr-text '^fpgrad: 1 tensor in 1 file, 36 elements, 31 nonzero finite; round rne$' \
    '^  fp16   [0-9.]+% vanish, [0-9.]+% subnormal, [0-9.]+% overflow; SQNR ' \
    '^         worst: thr\.npy \([0-9.]+% lost\)$' \
    '^  tensor +step +nonzero +fp16 +bf16 +e4m3 +e5m2$' '^\(--all: every tensor'
good thr-all --all "$tmp/thr.npy"
has thr-all '^  tensor +step +dtype +shape +count +zeros +log2\|x\| +median$' \
    '^  thr\.npy +f64 +\[36\] +36 +2 +-134\.\.127 ' '^  total +36 +2 +-134\.\.127 ' \
    '^fp16, % of the nonzero values:$' '^  tensor +step +nonzero +zero +subn +over +SQNR dB$'

# --scale 1024 and a scale that is not a power of two.
good scale --json - --formats fp16 --scale 1024 "$tmp/scale.npy"
check scale 'd["scale"] == 1024 and F(T) == {"fp16": (1, 1, 1)}'
good scale-pow --json - --formats fp16 --scale 2^10 "$tmp/scale.npy"
check scale-pow 'd["scale"] == 1024 and F(T) == {"fp16": (1, 1, 1)}'
good scale3 --json - --formats fp16 --scale 3 "$tmp/scale3.npy"
check scale3 'F(T) == {"fp16": (0, 0, 1)}'
good scale-text --formats fp16 --scale 1024 "$tmp/scale.npy"
has scale-text ', loss scale 2\^10$' \
    '^  fp16   20\.00% vanish, 20\.00% subnormal, 20\.00% overflow; SQNR '

# --scale auto: the scales, and what remains after them.  Without the
# dumper's roles every tensor takes the loss scale: the largest power of
# two at which none overflows fp16, 2^-1 (c: 65520); each tensor's own
# largest is reported beside it.  FP8 scales: max/amax in float32 (exact),
# or with --fp8-scale pow2 the largest 2^k with amax * 2^k <= max.
good auto --json - --scale auto "$tmp/auto"
check auto 'd["auto"]["margin"] == 0 and d["auto"]["fp8_scale"] == "exact"
    and d["auto"]["loss_scale_format"] == "fp16" and d["auto"]["loss_scaled_all"]
    and d["auto"]["loss_scale"] == {"log2": -1, "value": 0.5}
    and d["auto"]["limited_by"]["name"] == "c.npy" and d["auto"]["limited_by"]["amax"] == 65520
    and d["scale"] == 1
    and [(x["name"], x["auto"]["max_loss_scale"]["log2"]) for x in d["tensors"]]
        == [("a.npy", 15), ("b.npy", 0), ("c.npy", -1), ("d.npy", 14)]
    and all(x["auto"]["at_loss_scale"]["scale"] == 0.5 for x in d["tensors"])
    and all(abs(x["auto"]["fp8_scale"]["e4m3"]["scale"]["value"] - 448 / x["amax"])
            <= 448 / x["amax"] * 2**-23 for x in d["tensors"])
    and t["a.npy"]["auto"]["fp8_scale"]["e4m3"]["scale"] == {"log2": None, "value": 448}
    and t["a.npy"]["auto"]["fp8_scale"]["e5m2"]["scale"] == {"log2": None, "value": 57344}
    and list(t["a.npy"]["auto"]["fp8_scale"]) == ["e4m3", "e5m2"]
    and F(t["a.npy"]["auto"]["at_loss_scale"])["fp16"] == (2, 0, 0)
    and (t["a.npy"]["auto"]["fp8_scale"]["e4m3"]["underflow"],
         t["a.npy"]["auto"]["fp8_scale"]["e5m2"]["underflow"]) == (2, 1)
    and all(F(x["auto"]["at_loss_scale"])["fp16"][2] == 0 for x in d["tensors"])
    and F(T["auto"]["at_loss_scale"])["fp16"]
        == tuple(sum(F(x["auto"]["at_loss_scale"])["fp16"][i] for x in d["tensors"]) for i in range(3))
    and F(T["auto"]["at_loss_scale"])["fp16"] == (2, 0, 0)
    and T["auto"]["fp8_scale"]["e4m3"]["underflow"]
        == sum(x["auto"]["fp8_scale"]["e4m3"]["underflow"] for x in d["tensors"])
    and T["amax"] == 65520'
good auto-pow2 --json - --scale auto --fp8-scale pow2 "$tmp/auto"
check auto-pow2 'd["auto"]["fp8_scale"] == "pow2"
    and [x["auto"]["fp8_scale"]["e4m3"]["scale"]["log2"] for x in d["tensors"]] == [8, -8, -8, 7]
    and [x["auto"]["fp8_scale"]["e5m2"]["scale"]["log2"] for x in d["tensors"]] == [15, -1, -1, 14]
    and t["a.npy"]["auto"]["fp8_scale"]["e4m3"]["scale"]["value"] == 256'
good auto-margin --json - --scale auto --fp8-scale pow2 --margin 2 --formats fp16,e4m3 "$tmp/auto/a.npy"
check auto-margin 'list(t["a.npy"]["auto"]["fp8_scale"]) == ["e4m3"]
    and t["a.npy"]["auto"]["fp8_scale"]["e4m3"]["scale"]["log2"] == 6
    and t["a.npy"]["auto"]["max_loss_scale"]["log2"] == 15
    and d["auto"]["loss_scale"]["log2"] == 15'
good auto-text --scale auto "$tmp/auto"
has auto-text '^Loss scale 2\^-1: the largest with no fp16 overflow in the 4 loss-scaled tensors' \
    '^  fp16   at the loss scale: ' '^  e4m3   own FP8 scale: ' \
    'max/amax in float32, margin 0\)$'

# The dumper's roles: the loss scale multiplies grad/ and actgrad/ only,
# set by their largest magnitude (grad/fc1.weight, 100000: 2^-1), and the
# weights stay at 1; the rows add up to the total.
good roles --json - --scale auto "$tmp/step.safetensors"
check roles 'd["auto"]["loss_scale"]["log2"] == -1 and not d["auto"]["loss_scaled_all"]
    and d["auto"]["limited_by"]["name"] == "grad/fc1.weight"
    and [x["loss_scaled"] for x in d["tensors"]] == [True, True, True, False]
    and t["weight/fc1.weight"]["auto"]["at_loss_scale"]["scale"] == 1
    and t["grad/fc1.bias"]["auto"]["at_loss_scale"]["scale"] == 0.5
    and F(t["weight/fc1.weight"]["auto"]["at_loss_scale"]) == F(t["weight/fc1.weight"])
    and all(F(T["auto"]["at_loss_scale"])[f][i]
            == sum(F(x["auto"]["at_loss_scale"])[f][i] for x in d["tensors"])
            for f in d["formats"] for i in range(3))
    and [x["step"] for x in d["tensors"]] == [100] * 4'
good roles-re --json - --scale auto --loss-scaled '^grad/fc1\.bias$' "$tmp/step.safetensors"
check roles-re 'd["auto"]["loss_scale"]["log2"] == 16
    and [x["loss_scaled"] for x in d["tensors"]] == [False, True, False, False]'
good roles-scale --json - --scale 1024 --formats fp16 "$tmp/step.safetensors"
check roles-scale '[x["scale"] for x in d["tensors"]] == [1024, 1024, 1024, 1]
    and F(t["weight/fc1.weight"])["fp16"] == (0, 0, 0)'

# A name's control characters are escaped in the table: one line a tensor.
good odd --formats fp16 --scale auto --all "$tmp/odd.safetensors"
has odd '^  line\\nbreak ' '^  tab\\there '
if ! grep -q '^break' "$tmp/odd.out" && [ "$(grep -c '^  line\\nbreak ' "$tmp/odd.out")" -eq 2 ]; then
    ok
else
    bad "odd: a name broke its line"
fi

# The text fits 100 columns, on the bundled sample too, with --scale auto,
# --all, and long tensor names (cut in the middle).
safetensors_long="$tmp/long.st" # (not among the checked inputs: made here)
python3 - "$safetensors_long" <<'PYEOF'
import json, struct, sys
name = "grad/" + "very.deep.module.name." * 6 + "weight"
data = struct.pack("<4f", 1e-9, 2.0**-30, 0.5, 0.0)
h = json.dumps({name: {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PYEOF
for args in "" "--scale auto" "--all" "--scale auto --all --formats fp16,bf16,e4m3,e5m2,mxfp8,mxfp6_e2m3,e4m3fnuz"; do
    # shellcheck disable=SC2086 # a list of options
    good width "$srcdir/tests/data/sample" "$safetensors_long" $args
    fits width
done

# The README's quick start shows what fpgrad --scale auto prints on the
# sample: every line of its console block.
good readme --scale auto "$srcdir/tests/data/sample"
awk '/^```console$/ { f = 1; next } f && /^```$/ { exit } f' "$srcdir/README.md" >"$tmp/readme.txt"
if [ -s "$tmp/readme.txt" ] && ! grep -vxF -f "$tmp/readme.out" "$tmp/readme.txt" >"$tmp/readme.missing"
then ok; else bad "README.md shows lines fpgrad does not print: $(head -n 3 "$tmp/readme.missing")"; fi

# safetensors and --match.
good match --json - --match '^grad/' "$tmp/step.safetensors"
check match '[x["name"] for x in d["tensors"]] == ["grad/fc1.bias", "grad/fc1.weight"]
    and T["count"] == 9 and T["zeros"] == 1 and T["amax"] == 100000
    and F(T)["fp16"] == (2, 1, 1) and t["grad/fc1.weight"]["shape"] == [3, 2]
    and T["tensors"] == 2 and T["files"] == 1'
good match-alt --json - --match 'fc1\.(bias|weight)$' --formats e4m3 "$tmp/step.safetensors"
check match-alt '[x["name"] for x in d["tensors"]] == ["grad/fc1.bias", "grad/fc1.weight", "weight/fc1.weight"]'

# Two halves in a directory give the totals of the whole file.
good whole --json - "$tmp/whole.npy"
good halves --json - "$tmp/halves"
check halves 'len(d["tensors"]) == 2 and T["files"] == 2 and T["count"] == 20000
    and all(T[k] == json.load(open(os.path.join(tmp, "whole.out")))["total"][k]
            for k in ("count", "zeros", "nonfinite", "amax", "log2_hist", "log2_median", "formats"))'
good whole-auto --json - --scale auto "$tmp/whole.npy"
good halves-auto --json - --scale auto "$tmp/halves"
check halves-auto 'd["auto"]["loss_scale"] == json.load(open(os.path.join(tmp, "whole-auto.out")))["auto"]["loss_scale"]
    and T["auto"] == json.load(open(os.path.join(tmp, "whole-auto.out")))["total"]["auto"]'

# Threads, and stochastic rounding, do not change the answers.
good seq --json - --round sr --scale auto --threads 1 "$tmp/step.safetensors" "$tmp/halves"
good par --json - --round sr --scale auto --threads 3 "$tmp/step.safetensors" "$tmp/halves"
if cmp -s "$tmp/seq.out" "$tmp/par.out"; then ok; else bad "--threads 3 changed the JSON"; fi
good par2 --json - --round sr --scale auto --threads 2 "$tmp/step.safetensors" "$tmp/halves"
if cmp -s "$tmp/seq.out" "$tmp/par2.out"; then ok; else bad "--threads 2 changed the JSON"; fi
# ... nor the JSON's tensors, formatted a batch at a time by the threads:
# 1300 tensors fill two batches and part of a third.
# (in a directory of its own: the walks of $tmp below count its files)
many=$(mktemp -d "${TMPDIR:-/tmp}/check_fpgrad_many.XXXXXX")
sh "$srcdir/tests/many-tensors.sh" 1300 BF16 "$many/many.safetensors"
for mode in "" "--recipes standard"; do
    # shellcheck disable=SC2086 # MODE is zero or two words
    good many-seq --json - $mode --threads 1 "$many/many.safetensors"
    # shellcheck disable=SC2086
    good many-par --json - $mode --threads 3 "$many/many.safetensors"
    if [ "$(grep -c '"dtype": "bf16"' "$tmp/many-seq.out")" -eq 1300 ] &&
        cmp -s "$tmp/many-seq.out" "$tmp/many-par.out"; then
        ok
    else
        bad "${mode:-statistics}: 1300 tensors' JSON differs between --threads 1 and 3"
    fi
done
rm -rf "$many"
# Without --threads, the tensors are shared among the CPUs it may run on.
threads_by_default thrdef --quiet "$tmp/step.safetensors" "$tmp/halves"

# CSV: a header, a line per tensor and the total, its fractions the JSON's.
good csv --csv - --scale auto "$tmp/step.safetensors"
good csv-json --json - --scale auto "$tmp/step.safetensors"
if python3 - "$tmp/csv.out" "$tmp/csv-json.out" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
total = json.load(open(sys.argv[2]))["total"]["formats"]
for f, keys in total.items():
    for k, v in keys.items():
        if k.endswith("_frac") or k.endswith("_frac_all"):
            assert v is None or float(rows[-1][f + "_" + k]) == v, (f, k, rows[-1][f + "_" + k], v)
assert [r["name"] for r in rows] == ["actgrad/fc1", "grad/fc1.bias", "grad/fc1.weight",
                                     "weight/fc1.weight", ""], rows
assert [r["kind"] for r in rows] == ["tensor"] * 4 + ["total"], rows
w = rows[2]
assert w["shape"] == "[3, 2]" and w["count"] == "6" and w["zeros"] == "1" and w["amax"] == "100000"
assert w["step"] == "100" and w["loss_scaled"] == "1" and rows[3]["loss_scaled"] == "0"
assert (w["fp16_underflow"], w["fp16_subnormal"], w["fp16_overflow"]) == ("1", "1", "1")
assert w["loss_scale"] == "0.5" and rows[3]["loss_scale"] == "1" and rows[4]["loss_scale"] == ""
assert "fp8_e4m3_scale" in w and "fp8_e5m2_underflow" in w and "fp16_sqnr_db" in w
EOF
then ok; else bad "csv: check failed"; fi

# Files: JSON and CSV written whole; the table still printed.
good files --json "$tmp/o.json" --csv "$tmp/o.csv" "$tmp/thr.npy"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/o.json" &&
    [ "$(wc -l <"$tmp/o.csv")" -eq 3 ] && grep -q '^fpgrad: 1 tensor' "$tmp/files.out"; then
    ok
else
    bad "files: --json/--csv files or the table missing"
fi
good quiet --quiet --json "$tmp/q.json" "$tmp/thr.npy"
if [ ! -s "$tmp/quiet.out" ] && [ -s "$tmp/q.json" ]; then ok; else bad "--quiet: output on stdout"; fi

# Errors: one line naming the problem, status 2 for bad usage or input, 3
# for internal failures (an output that cannot be written, gnuplot).
error missing 2 'nosuch\.npy: cannot open: No such file' "$tmp/nosuch.npy"
error badfmt 2 'unknown format "fp17"' --formats fp16,fp17 "$tmp/thr.npy"
error twicefmt 2 'fp16 is named twice' --formats fp16,half "$tmp/thr.npy"
error badre 2 'option --match: "\(" is not a regular expression' --match '(' "$tmp/thr.npy"
error scale0 2 'option --scale: "0" is not a finite positive number' --scale 0 "$tmp/thr.npy"
error scaleneg 2 'option --scale: "-2" is not a finite positive number' --scale -2 "$tmp/thr.npy"
error scaleinf 2 'option --scale: "inf" is not a finite positive number' --scale inf "$tmp/thr.npy"
error scaletext 2 'option --scale: .*give a number, 2\^K or auto' --scale lots "$tmp/thr.npy"
error scalepow 2 'option --scale: "2\^2000" is not a finite positive number' --scale 2^2000 "$tmp/thr.npy"
error margin 2 'option --margin applies to --scale auto only' --margin 1 "$tmp/thr.npy"
error margin-range 2 'option --margin: "-1" is not an integer from 0 to 64' --scale auto --margin -1 "$tmp/thr.npy"
error badround 2 'unknown rounding mode "up"' --round up "$tmp/thr.npy"
error garbage 2 'garbage\.npy: ' "$tmp/bad/garbage.npy"
# What people give instead of a dump is named for what it is.
printf 'PK\003\004rest of a zip' >"$tmp/bad/pytorch_model.bin"
# (the magic number that starts torch.save's legacy format)
printf '\200\002\212\012\154\374\234\106\371\040\152\250\120\031rest' >"$tmp/bad/legacy.pt"
printf '{"metadata": {}, "weight_map": {"a": "gone.safetensors"}}' \
    >"$tmp/bad/model.safetensors.index.json"
error torchzip 2 'pytorch_model\.bin: not a valid zip archive' "$tmp/bad/pytorch_model.bin"
error pickle 2 'legacy\.pt: a torch\.save file of the legacy format' "$tmp/bad/legacy.pt"
error hfindex 2 'gone\.safetensors: cannot open' \
    "$tmp/bad/model.safetensors.index.json"
# An output option that took the only path as its file is said so.
error json-took 2 'no PATH: --json took "[^"]*thr\.npy" as the file to write' --json "$tmp/thr.npy"
rm -f "$tmp/bad/pytorch_model.bin" "$tmp/bad/legacy.pt" "$tmp/bad/model.safetensors.index.json"
error short 2 'short\.npy: ' "$tmp/bad/short.npy"
error baddir 2 'garbage\.npy: ' "$tmp/bad"
error emptydir 2 'no tensors found' "$tmp/empty"
error nomatch 2 'no tensors to analyse: --match matched none of the 4 found' --match '^nothing' "$tmp/step.safetensors"
error plotext 2 'option --plot: ".*x\.pdf" must end in \.png or \.svg' --plot "$tmp/x.pdf" "$tmp/thr.npy"
error option 2 'unknown option "--bogus"' --bogus "$tmp/thr.npy"
error needsarg 2 'option --json needs an argument' "$tmp/thr.npy" --json
error noarg 2 'option --quiet takes no argument' --quiet=1 "$tmp/thr.npy"
error threads 2 'option --threads: "0" is not an integer from 1 to 1024' --threads 0 "$tmp/thr.npy"
error threads-space 2 'option --threads: " 2" is not an integer' --threads ' 2' "$tmp/thr.npy"
error threads-plus 2 'option --threads: "\+2" is not an integer' --threads +2 "$tmp/thr.npy"
error emptyfmt 2 'option --formats: an empty name in "fp16,,bf16"' --formats fp16,,bf16 "$tmp/thr.npy"
error emptyfmt-end 2 'option --formats: an empty name in "fp16,"' --formats fp16, "$tmp/thr.npy"
error shape 2 'give --dtype too' --shape 4 "$tmp/thr.npy"
error shape-empty 2 'option --shape: "" is not a dimension \(a count from 0\) in "6,,6"' --dtype f64 --shape 6,,6 "$tmp/thr.npy"
error shape-size 2 'thr\.npy: .*5, 5' --dtype f64 --shape 5,5 "$tmp/thr.npy"
error dtype 2 'unknown dtype "f128"' --dtype f128 "$tmp/thr.npy"
error rawdir 2 'is a directory; --dtype reads raw files' --dtype f32 "$tmp/halves"
error stdout2 2 'cannot both write to standard output' --json - --csv - "$tmp/thr.npy"
error overwrite 2 'thr\.npy: is an input; fpgrad does not write over its inputs' --json "$tmp/thr.npy" "$tmp/thr.npy"
error nodir 3 'o\.json: cannot create a file in its directory' --json "$tmp/nodir/o.json" "$tmp/thr.npy"
# No output replaces an input, through a link or as a report's file, nor
# another output; the run is refused before it starts.
mkdir "$tmp/rep"
cp "$tmp/thr.npy" "$tmp/rep/index.html"
error overwrite-report 2 'rep/index\.html: is an input; fpgrad does not write over its inputs' \
    --report "$tmp/rep" "$tmp/rep/index.html"
ln -s thr.npy "$tmp/thr-link.npy"
error overwrite-link 2 'thr-link\.npy: is an input' --json "$tmp/thr-link.npy" "$tmp/thr.npy"
if cmp -s "$tmp/thr.npy" "$tmp/rep/index.html" && [ "$(ls "$tmp/rep")" = index.html ] &&
    [ -L "$tmp/thr-link.npy" ]; then
    ok
else
    bad "an input named as an output was changed, or the report began"
fi
rm -rf "$tmp/rep" "$tmp/thr-link.npy"
error twice 2 'o\.json: is named for two outputs$' --json "$tmp/o.json" --csv "$tmp/o.json" "$tmp/thr.npy"
mkdir "$tmp/r2"
error twice-report 2 'fpgrad\.json: is named for two outputs \(also as ' \
    --json "$tmp/r2/fpgrad.json" --report "$tmp/r2/" "$tmp/thr.npy"
good devnull-twice --quiet --json /dev/null --csv /dev/null "$tmp/thr.npy"
rmdir "$tmp/r2"
run usage
if [ "$(cat "$tmp/usage.rc")" -eq 2 ] && grep -q '^usage: fpgrad ' "$tmp/usage.err"; then
    ok
else
    bad "no PATH: status $(cat "$tmp/usage.rc"), or no usage on stderr"
fi

# Raw files: the thresholds as raw little-endian f64 give the same counts.
python3 - "$tmp/thr.npy" "$tmp/thr.raw" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
hlen = struct.unpack("<H", data[8:10])[0]
open(sys.argv[2], "wb").write(data[10 + hlen:])
EOF
good raw --json - --dtype f64 --shape 6,6 "$tmp/thr.raw"
check raw 'F(T) == F(json.load(open(os.path.join(tmp, "thr.out")))["total"])
    and d["tensors"][0]["shape"] == [6, 6] and d["tensors"][0]["dtype"] == "f64"'

# --help and --version: stdout, status 0.
good help --help
has help '^usage: fpgrad '
good version --version
has version '^fpgrad \(fpkit [0-9]'
# ... and a failed write of them is an error.
for opt in --help --version; do
    rc=0
    "$FPGRAD" $opt >/dev/full 2>"$tmp/full.err" || rc=$?
    if [ "$rc" -eq 3 ] && grep -q '^fpgrad: writing the output failed' "$tmp/full.err"; then
        ok
    else
        bad "$opt into /dev/full: status $rc: $(cat "$tmp/full.err")"
    fi
done

# A JSON that cannot be written: status 3, the file and the reason named.
rc=0
"$FPGRAD" --quiet --json /dev/full "$srcdir/tests/data/sample" 2>"$tmp/jfull.err" || rc=$?
if [ "$rc" -eq 3 ] &&
    grep -q '^fpgrad: /dev/full: writing the JSON failed: No space left on device' "$tmp/jfull.err"; then
    ok
else
    bad "--json /dev/full: status $rc: $(cat "$tmp/jfull.err")"
fi

# The usage lines of --help are the SYNOPSIS of the man page.
synopsis "$manpage" "$tmp/help.out"

# Every example of the man page runs and exits 0, on a directory laid out
# as the examples expect (those that plot need gnuplot; pipes are skipped).
# shellcheck disable=SC2034 # read by the eval below
fpgrad_abs=$(cd "$(dirname "$FPGRAD")" && pwd)/$(basename "$FPGRAD")
mkdir -p "$tmp/ex/dumps/more"
cp "$tmp/step.safetensors" "$tmp/ex/dumps/step100.safetensors"
cp "$tmp/halves/a.npy" "$tmp/ex/dumps/more/a.npy"
python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(struct.pack("<131072f", *[(i % 1000) * 2.0**-20 for i in range(131072)]))' "$tmp/ex/grad.bin"
nex=0
if [ -s "$manpage" ]; then
    sed -n 's/^\.Dl fpgrad //p' "$manpage" | sed 's/\\-/-/g' >"$tmp/examples"
    while IFS= read -r line; do
        case $line in
        *'|'*) continue ;;
        *--plot* | *--report*) [ "$have_gnuplot" = yes ] || { skipped "example needs gnuplot: fpgrad $line"; continue; } ;;
        esac
        nex=$((nex + 1))
        rc=0
        (cd "$tmp/ex" && eval "\"\$fpgrad_abs\" $line") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
        if [ "$rc" -eq 0 ] && [ ! -s "$tmp/ex.err" ]; then
            ok
        else
            bad "man page example: fpgrad $line: status $rc: $(head -n 2 "$tmp/ex.err")"
        fi
    done <"$tmp/examples"
fi
if [ "$nex" -ge 5 ]; then ok; else bad "$manpage: only $nex examples run"; fi

# Plots: the PNG has the size asked for; SVG too; gnuplot's failure is a
# clear error and leaves nothing behind.
if [ "$have_gnuplot" = yes ]; then
    mkdir "$tmp/plots"
    good plot --quiet --plot "$tmp/plots/h.png" --plot-size 640x400 "$tmp/halves"
    if [ -f "$tmp/plots/h.png" ] && [ "$(png_size "$tmp/plots/h.png")" = 640x400 ]; then
        ok
    else
        bad "plot: $tmp/plots/h.png missing or not 640x400"
    fi
    good plot-log --quiet --logy --plot "$tmp/plots/log.png" --scale 1024 "$tmp/thr.npy"
    if [ "$(png_size "$tmp/plots/log.png")" = 1000x600 ]; then ok; else bad "plot-log: not 1000x600"; fi
    good plot-svg --quiet --plot "$tmp/plots/h.svg" "$tmp/step.safetensors"
    if grep -q '<svg' "$tmp/plots/h.svg"; then ok; else bad "plot-svg: no <svg> in h.svg"; fi
    FPKIT_GNUPLOT=false
    export FPKIT_GNUPLOT
    error plotfail 3 'bad\.png: gnuplot failed' --quiet --plot "$tmp/plots/bad.png" "$tmp/thr.npy"
    FPKIT_GNUPLOT=$tmp/no/gnuplot
    error plotnone 3 'bad\.png: gnuplot is needed for plots and was not found' --plot "$tmp/plots/bad.png" "$tmp/thr.npy"
    unset FPKIT_GNUPLOT
    plotdir=$FPKIT_PLOTDIR
    FPKIT_PLOTDIR=$tmp/no
    error plotdir 3 'no/hist\.gp: cannot read the plot script' --plot "$tmp/plots/bad.png" "$tmp/thr.npy"
    FPKIT_PLOTDIR=$plotdir
    left=$(cd "$tmp/plots" && find . -type f | sort | tr '\n' ' ')
    if [ "$left" = "./h.png ./h.svg ./log.png " ]; then
        ok
    else
        bad "plots: files left behind: $left"
    fi
else
    skipped "plots (no gnuplot)"
fi

# --report: index.html, and every file it refers to exists.
set -- --quiet --scale auto --report "$tmp/rep" "$tmp/step.safetensors" "$tmp/halves"
if [ "$have_gnuplot" = yes ]; then
    good report "$@"
else
    run report "$@"
    if [ "$(cat "$tmp/report.rc")" -eq 0 ] &&
        grep -q '^fpgrad: .*gnuplot was not found, so the report has no plots' "$tmp/report.err"; then
        ok
    else
        bad "report without gnuplot: status $(cat "$tmp/report.rc"): $(cat "$tmp/report.err")"
    fi
fi
if python3 - "$tmp/rep" "$have_gnuplot" <<'EOF'
import json, os, re, sys
rep, gnuplot = sys.argv[1], sys.argv[2] == "yes"
html = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
refs = re.findall(r'(?:src|href)="([^"#]+)"', html)
assert "fpgrad.json" in refs and "fpgrad.csv" in refs, refs
assert not any(re.match(r"[a-z]+:", r) or r.startswith("/") for r in refs), refs
for r in refs:
    assert os.path.isfile(os.path.join(rep, r)), r
pngs = [r for r in refs if r.endswith(".png")]
# two histograms, the trend over the two steps (100 and none: one), every tensor's plot
assert len(pngs) == (2 + 6 if gnuplot else 0), pngs
d = json.load(open(os.path.join(rep, "fpgrad.json")))
assert len(d["tensors"]) == 6 and d["auto"]["margin"] == 0
assert "grad/fc1.weight" in html and "<script>" in html and "http" not in html.split("<script>")[1]
# the summary first, a step and a file column, a sortable table, captions naming the step
assert html.index("Summary") < html.index("Every tensor"), "summary first"
assert "<th>step</th>" in html and "<th>file</th>" in html and 'class="sortable"' in html
assert "fpgrad.csv" in os.listdir(rep) and ", step 100<br>" in html
assert not [f for f in os.listdir(rep) if f.startswith(".")], os.listdir(rep)
assert not [f for f in os.listdir(os.path.dirname(rep)) if f.startswith(".rep.")], "temporary left"
EOF
then ok; else bad "report: index.html or its files"; fi
# Written fresh: a rerun leaves no stale file of the earlier report.
if [ "$have_gnuplot" = yes ]; then
    touch "$tmp/rep/tensors/9999.png" "$tmp/rep/stale.txt"
    good report-again --quiet --report "$tmp/rep" "$tmp/step.safetensors"
    if [ ! -e "$tmp/rep/stale.txt" ] && [ ! -e "$tmp/rep/tensors/9999.png" ] &&
        [ "$(find "$tmp/rep/tensors" -name '*.png' | wc -l | tr -d ' ')" -eq 4 ]; then
        ok
    else
        bad "report-again: stale files left: $(ls "$tmp/rep" "$tmp/rep/tensors" | tr '\n' ' ')"
    fi
    good report-many --quiet --report "$tmp/many" "$tmp/many.safetensors"
    n=$(find "$tmp/many/tensors" -type f -name '*.png' | wc -l | tr -d ' ')
    if [ "$n" -eq 66 ]; then ok; else bad "report-many: $n plots, expected all 66"; fi
    good report-few --quiet --report-plots 10 --report "$tmp/few" "$tmp/many.safetensors"
    n=$(find "$tmp/few/tensors" -type f -name '*.png' | wc -l | tr -d ' ')
    if [ "$n" -eq 10 ] && grep -q 'the 10 of 66 that lose most' "$tmp/few/index.html"; then
        ok
    else
        bad "report-few: $n plots, expected 10 and a note"
    fi
else
    skipped "report plots (no gnuplot)"
fi

# numpy: random tensors against numpy's own comparisons with each format's
# thresholds, and fp16 against numpy's float16 conversion.
if [ "$have_numpy" = yes ]; then
    "$numpy_python" - "$tmp" <<'EOF'
import json, os, sys
import numpy as np
tmp = sys.argv[1]
rng = np.random.default_rng(11)
n = 300000
mag = 2.0 ** rng.uniform(-140, 20, n)
x = (mag * rng.choice([-1.0, 1.0], n)).astype(np.float32)
x[rng.integers(0, n, 3000)] = 0
# exact thresholds sprinkled in
thr = np.array([2.0**-25, 2.0**-24, 2.0**-14, 2.0**-10, 2.0**-17, 2.0**-134, 464, 465, 61440, 65520,
                65504, 2.0**-6, 2.0**-9], np.float32)
x[:thr.size] = thr
x[thr.size:2 * thr.size] = -thr
np.save(os.path.join(tmp, "np.npy"), x.reshape(600, 500))
a = np.abs(x.astype(np.float64))
nz = a > 0
def counts(zero_le, normal_min, sub_lt, over_ge=None, over_gt=None):
    u = int(np.sum(nz & (a <= zero_le)))
    s = int(np.sum((a > zero_le) & (a < sub_lt)))
    o = int(np.sum(a >= over_ge)) if over_ge is not None else int(np.sum(a > over_gt))
    return [u, s, o]
p = lambda e: 2.0 ** e
exp = {
    # subnormal: rounds to below min normal, i.e. |x| < min normal - half a subnormal ulp
    "fp16": counts(p(-25), p(-14), p(-14) - p(-25), over_ge=65520),
    "bf16": counts(p(-134), p(-126), p(-126) - p(-134), over_ge=p(128) - p(119)),
    "e4m3": counts(p(-10), p(-6), p(-6) - p(-10), over_gt=464),
    "e5m2": counts(p(-17), p(-14), p(-14) - p(-17), over_ge=61440),
}
with np.errstate(over="ignore"):
    h = x[nz].astype(np.float16)
ha = np.abs(h.astype(np.float64))
exp_f16 = [int(np.sum(ha == 0)), int(np.sum((ha > 0) & (ha < p(-14)))), int(np.sum(np.isinf(h)))]
assert exp["fp16"] == exp_f16, (exp["fp16"], exp_f16)
e = np.frexp(a[nz])[1] - 1
hist = np.bincount(e - e.min())
json.dump({"formats": exp, "count": n, "zeros": int(np.sum(~nz)), "amax": float(a.max()),
           "hist_min": int(e.min()), "hist": [int(v) for v in hist]},
          open(os.path.join(tmp, "np.json"), "w"))
EOF
    good np --json - "$tmp/np.npy"
    check np 'F(T) == {k: tuple(v) for k, v in json.load(open(os.path.join(tmp, "np.json")))["formats"].items()}
        and T["count"] == json.load(open(os.path.join(tmp, "np.json")))["count"]
        and T["zeros"] == json.load(open(os.path.join(tmp, "np.json")))["zeros"]
        and T["amax"] == json.load(open(os.path.join(tmp, "np.json")))["amax"]
        and T["log2_hist"]["min"] == json.load(open(os.path.join(tmp, "np.json")))["hist_min"]
        and T["log2_hist"]["counts"] == json.load(open(os.path.join(tmp, "np.json")))["hist"]'

    # The bundled sample: fpgrad's totals against numpy's count of the same
    # thresholds over every tensor of the four steps (read with json and
    # struct, not through fpkit).
    "$numpy_python" - "$srcdir/tests/data/sample" "$tmp" <<'EOF'
import json, os, struct, sys
import numpy as np
sample, tmp = sys.argv[1], sys.argv[2]
vals = []
for name in sorted(os.listdir(sample)):
    if not name.endswith(".safetensors"):
        continue
    blob = open(os.path.join(sample, name), "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    for key, t in header.items():
        if key == "__metadata__":
            continue
        assert t["dtype"] == "F32", t["dtype"]
        lo, hi = t["data_offsets"]
        vals.append(np.frombuffer(blob[8 + n + lo:8 + n + hi], "<f4"))
a = np.abs(np.concatenate(vals).astype(np.float64))
nz = a > 0
p = lambda e: 2.0 ** e
def counts(zero_le, sub_lt, over_ge=None, over_gt=None):
    return [int(np.sum(nz & (a <= zero_le))), int(np.sum((a > zero_le) & (a < sub_lt))),
            int(np.sum(a >= over_ge)) if over_ge is not None else int(np.sum(a > over_gt))]
exp = {"fp16": counts(p(-25), p(-14) - p(-25), over_ge=65520),
       "bf16": counts(p(-134), p(-126) - p(-134), over_ge=p(128) - p(119)),
       "e4m3": counts(p(-10), p(-6) - p(-10), over_gt=464),
       "e5m2": counts(p(-17), p(-14) - p(-17), over_ge=61440)}
json.dump({"formats": exp, "count": int(a.size), "zeros": int(np.sum(~nz))},
          open(os.path.join(tmp, "np-sample.json"), "w"))
EOF
    good np-sample --json - "$srcdir/tests/data/sample"
    check np-sample 'F(d["total"]) == {k: tuple(v) for k, v in json.load(open(os.path.join(tmp, "np-sample.json")))["formats"].items()}
        and d["total"]["count"] == json.load(open(os.path.join(tmp, "np-sample.json")))["count"]
        and d["total"]["zeros"] == json.load(open(os.path.join(tmp, "np-sample.json")))["zeros"]'
else
    skipped "numpy comparisons (numpy not installed)"
fi

# Inputs are never modified; no temporary file is left anywhere.
if [ "$sums_before" = "$(inputs)" ]; then ok; else bad "an input file changed"; fi
left=$(find "$tmp" -name '.*.??????' | head -n 3)
if [ -z "$left" ]; then ok; else bad "temporary files left: $left"; fi

summary
