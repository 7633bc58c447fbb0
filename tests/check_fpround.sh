#!/bin/sh
# fpround on tensors whose answers are known exactly: sums of ones in fp16
# and bf16 (sequential summation stagnates at 2048 and 256; pairwise and
# Kahan reach the exact sum; 2^20 ones overflow fp16 pairwise, since
# 32768 + 32768 = 65536 rounds to inf), stochastic-rounding sums unbiased
# over many seeds, a dot product where exact products accumulated in fp32
# lose nothing and rounded products do, the rounding error of 0.1 in fp16
# and e4m3 (worked out by hand with exact fractions), the SQNR of a uniform
# tensor in bf16 (against an independent bf16 rounding and the uniform
# model), the JSON, the text (its summary agrees with the JSON, --top and
# --all, 100 columns, singulars), the error cases, the plots (every series
# visible), and every example of the man page run on the bundled sample
# dump.
#
# make check runs it from the build directory with srcdir set; FPROUND names
# another binary.  Parts that need gnuplot are reported as skipped when it
# is missing.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPROUND=${FPROUND:-./bin/fpround}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
manpage=$srcdir/man/fpround.1
tool=fpround tool_bin=$FPROUND
. "$srcdir/tests/toolcheck.sh"
need_python

# The data, and what fpround must find in it (expect.json), from exact
# fractions and bit manipulation in Python, never from fpkit.
python3 - "$tmp" <<'EOF'
import json, math, os, random, struct, sys
from fractions import Fraction as Fr

out = sys.argv[1]

def npy(path, values, descr="<f4"):
    code = {"<f8": "d", "<f4": "f", "<f2": "e"}[descr]
    data = struct.pack("<%d%s" % (len(values), code), *values)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)

def safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, values in tensors:
        b = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": [len(values)], "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

npy(os.path.join(out, "ones15.npy"), [1.0] * 2**15, "<f2")
npy(os.path.join(out, "ones20.npy"), [1.0] * 2**20, "<f2")
npy(os.path.join(out, "ones12.npy"), [1.0] * 2**12, "<f2")
npy(os.path.join(out, "nan.npy"), [1.0, float("nan"), float("inf"), -float("inf"), 0.0], "<f4")
npy(os.path.join(out, "tenth.npy"), [0.1] * 10 + [0.0, -0.1], "<f8")
# The least double rounded up into fp16: a relative error beyond any double.
npy(os.path.join(out, "tiny.npy"), [5e-324, 1.0], "<f8")
npy(os.path.join(out, "two32768.npy"), [32768.0, 32768.0])

# Dot: a = b = (1 + 2^-10) x 4.  Each exact product is 1 + 2^-9 + 2^-20;
# fp16 rounds it to 1 + 2^-9.  Exact dot 4 + 2^-7 + 2^-18, exact in fp32
# at every step; with rounded products 4 + 2^-7.
a = 1 + 2.0**-10
safetensors(os.path.join(out, "dot.safetensors"), [("a", [a] * 4), ("b", [a] * 4), ("c", [a] * 3)])
# Pairs: three zero, one with an infinity, one of numbers.
inf = float("inf")
safetensors(os.path.join(out, "odd.safetensors"), [("line\nbreak", [0.1, 0.2])])
safetensors(os.path.join(out, "kinds.safetensors"), [("a", [0.0, 0.0, 1.0, 0.0, 1.0]),
                                                     ("b", [0.0, 2.0, 0.0, inf, 2.0])])
exact_dot = 4 * Fr(a) * Fr(a)
rounded_dot = Fr(4) + Fr(1, 2**7)

# 0.1 as a double, and its roundings by hand: 0.1 = 1.6 * 2^-4, so in fp16
# (10 fraction bits) 0.1 * 2^14 = 1638.4..: RNE and RTZ give 1638 * 2^-14,
# RUP 1639 * 2^-14; in e4m3 (3 bits) 0.1 * 2^7 = 12.8..: RNE 13 * 2^-7.
x = Fr(0.1)
def err(q, ulp):
    r = (q - x) / x
    return {"rel": float(r), "abs_rel": float(abs(r)), "ulps": float(abs(q - x) / ulp),
            "sqnr": -20 * math.log10(abs(float(r)))}
tenth = {"fp16_rne": err(Fr(1638, 2**14), Fr(1, 2**14)),
         "fp16_rup": err(Fr(1639, 2**14), Fr(1, 2**14)),
         "e4m3_rne": err(Fr(13, 2**7), Fr(1, 2**7))}

# Uniform in [1, 2), as float32; bf16 by round-to-nearest-even on the bits.
rnd = random.Random(5)
u = [struct.unpack("<f", struct.pack("<f", 1 + rnd.random()))[0] for _ in range(50000)]
npy(os.path.join(out, "uniform.npy"), u)
def bf16(v):
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return struct.unpack("<f", struct.pack("<I", b))[0]
sx = sum(Fr(v) ** 2 for v in u)
se = sum((Fr(bf16(v)) - Fr(v)) ** 2 for v in u)
sqnr = 10 * math.log10(sx / se)
# The model: error uniform over +-ulp/2 with ulp 2^-7, E[x^2] = 7/3.
model = 10 * math.log10((7 / 3) / (2.0**-14 / 12))

json.dump({"tenth": tenth, "exact_dot": float(exact_dot),
           "dot_rounded_rel": float((rounded_dot - exact_dot) / exact_dot),
           "rounded_dot": float(rounded_dot), "sqnr": sqnr, "model": model},
          open(os.path.join(out, "expect.json"), "w"))
EOF




# check NAME PYTHON: the expression is true over d (NAME's JSON), e
# (expect.json), t (d's tensors by name), T (d's total), M(t, fmt, method,
# mode) (a sum's or dot's result object), E(t, fmt, mode) (an error object).
check() {
    name=$1
    if python3 - "$tmp" "$tmp/$name.out" "$2" <<'EOF'
import json, math, os, sys
tmp, path, expr = sys.argv[1:]
d = json.load(open(path, encoding="utf-8"))
e = json.load(open(os.path.join(tmp, "expect.json")))
t = {x["name"]: x for x in d["tensors"]}
T = d["total"]
M = lambda x, f, meth, mode: x["formats"][f]["methods"][meth][mode]
E = lambda x, f, mode: x["formats"][f][mode]
close = lambda a, b, tol=1e-15: abs(a - b) <= tol * abs(b)
if not eval("(" + expr + "\n)"):
    sys.exit("false: " + expr)
EOF
    then
        ok
    else
        bad "$name: JSON check failed"
    fi
}


# 2^15 ones in fp16: sequential stagnates at 2048 (2048 + 1 ties to 2048),
# pairwise and Kahan give exactly 32768.
good ones15 --json - --sum --formats fp16 --round rne "$tmp/ones15.npy"
check ones15 'd["tool"] == "fpround" and d["kind"] == "sum" and d["round"] == ["rne"]
    and t["ones15.npy"]["exact"] == 32768 and t["ones15.npy"]["formats"]["fp16"]["exact"] == 32768
    and M(t["ones15.npy"], "fp16", "sequential", "rne") == {"result": 2048, "error": -30720,
        "rel_error": -0.9375, "stagnation": 2048, "absorbed": 30720}
    and M(t["ones15.npy"], "fp16", "pairwise", "rne") == {"result": 32768, "error": 0, "rel_error": 0}
    and M(t["ones15.npy"], "fp16", "kahan", "rne")["result"] == 32768
    and list(t["ones15.npy"]["formats"]["fp16"]["methods"]) == ["sequential", "pairwise", "kahan"]'
good ones15-text --sum --all --formats fp16 --round rne "$tmp/ones15.npy"
has ones15-text '^ +fp16 +sequential +rne +2048 +-9\.375e-01 +- +2048 +30720$' \
    '^ +fp16 +pairwise +rne +32768 +\+0\.000e\+00 '

# A NaN sum reads "nan" everywhere in the text, whatever its sign bit.
good nan-text --sum --all --formats fp16 --round rne "$tmp/nan.npy"
has nan-text '^nan\.npy \[5\] .*; exact nan$' '^ +fp16 +exact +nan$' '^ +fp16 +sequential +rne +nan '
if grep -q -- '-nan' "$tmp/nan-text.out"; then bad "nan-text: -nan printed"; else ok; fi
# No line of a table ends in blanks (an empty last cell once padded one).
if grep -q ' $' "$tmp/nan-text.out" "$tmp/ones15-text.out"; then bad "trailing blanks"; else ok; fi
# Singulars: 1 tensor, 1 file, 1 zero; the summary says what the sums did.
good nan-default --formats fp16 --round rne "$tmp/nan.npy"
has nan-default '^fpround: 1 tensor in 1 file, 5 elements \(1 zero, 3 non-finite\); round rne$' \
    '^Summary over the 1 nonzero finite element:$' '^  fp16: every element is exact\.$' \
    '^The one tensor, by the share flushed to zero or overflowing:$'
has ones15-text '^  fp16: rne sequential 9\.4e-01, pairwise 0\.0e\+00, kahan 0\.0e\+00 \(worst: sequential' \
    'Most accurate: pairwise\.$'

# 2^20 ones in fp16: sequential still stagnates at 2048; pairwise overflows
# (32768 + 32768 = 65536 >= 65520 rounds to inf under RNE).
good ones20 --json - --sum --formats fp16 --round rne "$tmp/ones20.npy"
check ones20 'M(t["ones20.npy"], "fp16", "sequential", "rne") == {"result": 2048,
        "error": 2048 - 2**20, "rel_error": (2048 - 2**20) / 2**20, "stagnation": 2048,
        "absorbed": 2**20 - 2048}
    and M(t["ones20.npy"], "fp16", "pairwise", "rne") == {"result": "inf", "error": None, "rel_error": None}
    and T["formats"]["fp16"]["pairwise"]["rne"] == {"max_abs_rel_error": None, "nonfinite": 1}'

# bf16 (8-bit significand): 2^12 ones stagnate at 256; Kahan recovers 4096.
good ones12 --json - --sum --formats bf16,fp16 --round rne "$tmp/ones12.npy"
check ones12 'M(t["ones12.npy"], "bf16", "sequential", "rne")["result"] == 256
    and M(t["ones12.npy"], "bf16", "sequential", "rne")["stagnation"] == 256
    and M(t["ones12.npy"], "bf16", "kahan", "rne")["result"] == 4096
    and M(t["ones12.npy"], "bf16", "pairwise", "rne")["result"] == 4096
    and M(t["ones12.npy"], "fp16", "sequential", "rne")["result"] == 2048'

# Stochastic rounding: over 64 seeds the sequential fp16 sum of 4096 ones
# is unbiased (mean within 4 standard errors of 4096, where RNE is 2048
# off), the seeds differ, and the same seeds give the same sums.
good sr --json - --sum --formats fp16 --round rne,sr --seeds 64 --seed 100 "$tmp/ones12.npy"
check sr 'd["seeds"] == 64 and d["seed"] == 100
    and M(t["ones12.npy"], "fp16", "sequential", "sr")["seeds"] == 64
    and len(set(M(t["ones12.npy"], "fp16", "sequential", "sr")["results"])) > 8
    and abs(M(t["ones12.npy"], "fp16", "sequential", "sr")["mean"] - 4096)
        <= 4 * M(t["ones12.npy"], "fp16", "sequential", "sr")["sd"] / 8
    and M(t["ones12.npy"], "fp16", "sequential", "sr")["sd"] > 0
    and abs(M(t["ones12.npy"], "fp16", "sequential", "sr")["mean_rel_error"]) < 0.02
    and M(t["ones12.npy"], "fp16", "sequential", "rne")["rel_error"] == -0.5
    and close(M(t["ones12.npy"], "fp16", "sequential", "sr")["mean"],
              sum(M(t["ones12.npy"], "fp16", "sequential", "sr")["results"]) / 64)'
good sr2 --json - --sum --formats fp16 --round rne,sr --seeds 64 --seed 100 "$tmp/ones12.npy"
if cmp -s "$tmp/sr.out" "$tmp/sr2.out"; then ok; else bad "sr: the same seeds gave other sums"; fi

# Dot: exact products accumulated in fp32 lose nothing; products rounded to
# fp16 lose 2^-20 each, in fp32 accumulation and in fp16 alike.
good dot --json - --dot a b --formats fp16,fp64 --round rne "$tmp/dot.safetensors"
check dot 'd["kind"] == "dot" and len(d["tensors"]) == 1 and d["tensors"][0]["name_b"] == "b"
    and t["a"]["exact"] == e["exact_dot"] and t["a"]["formats"]["fp16"]["exact"] == e["exact_dot"]
    and M(t["a"], "fp16", "fp32acc_exact", "rne") == {"result": e["exact_dot"], "error": 0, "rel_error": 0}
    and M(t["a"], "fp16", "fp32acc_rounded", "rne")["result"] == e["rounded_dot"]
    and M(t["a"], "fp16", "fp32acc_rounded", "rne")["rel_error"] == e["dot_rounded_rel"]
    and M(t["a"], "fp16", "sequential", "rne")["result"] == e["rounded_dot"]
    and M(t["a"], "fp16", "fma", "rne")["result"] == e["rounded_dot"]
    and list(t["a"]["formats"]["fp16"]["methods"]) == ["sequential", "pairwise", "kahan", "fma",
        "fp32acc_exact", "fp32acc_rounded"]
    and list(t["a"]["formats"]["fp64"]["methods"]) == ["sequential", "pairwise", "kahan", "fma"]
    and M(t["a"], "fp64", "fma", "rne")["rel_error"] == 0'

# The rounding error of 0.1 (ten times, a zero and -0.1) in fp16 and e4m3.
# 32768 + 32768 has no bits to round off but overflows fp16, under SR too.
good two32768 --json - --sum --formats fp16 --round rne,sr --seeds 3 "$tmp/two32768.npy"
check two32768 'M(t["two32768.npy"], "fp16", "sequential", "rne")["result"] == "inf"
    and M(t["two32768.npy"], "fp16", "sequential", "sr")["results"] == ["inf"] * 3'
good kinds --json - --dot a b --formats fp16 --round rne "$tmp/kinds.safetensors"
check kinds '[t["a"][k] for k in ("count", "zeros", "nonfinite")] == [5, 3, 1]
    and [T[k] for k in ("count", "zeros", "nonfinite")] == [5, 3, 1]'
# A name's control characters are escaped in the text.
good odd --all --formats fp16 --round rne "$tmp/odd.safetensors"
if grep -q '^  line\\nbreak ' "$tmp/odd.out" && ! grep -q '^break' "$tmp/odd.out"; then ok; else bad "odd: the name broke its line"; fi
good tiny --json - --formats fp16 --round rup "$tmp/tiny.npy"
check tiny 'list(E(T, "fp16", "rup")) == ["measured", "overflow", "underflow", "exact",
        "mean_rel_error", "rms_rel_error", "max_rel_error", "bias", "max_ulp_error", "sqnr_db",
        "ulp_hist"]
    and E(T, "fp16", "rup")["max_rel_error"] == "inf" and E(T, "fp16", "rup")["mean_rel_error"] == "inf"
    and E(T, "fp16", "rup")["max_ulp_error"] == 1'
good tenth --json - --formats fp16,e4m3 --round rne,rup "$tmp/tenth.npy"
check tenth 'E(T, "fp16", "rne")["measured"] == 11 and T["zeros"] == 1
    and E(T, "fp16", "rne")["max_rel_error"] == e["tenth"]["fp16_rne"]["abs_rel"]
    and close(E(T, "fp16", "rne")["mean_rel_error"], e["tenth"]["fp16_rne"]["abs_rel"])
    and close(E(T, "fp16", "rne")["rms_rel_error"], e["tenth"]["fp16_rne"]["abs_rel"])
    and close(E(T, "fp16", "rne")["bias"], e["tenth"]["fp16_rne"]["rel"])
    and E(T, "fp16", "rne")["max_ulp_error"] == e["tenth"]["fp16_rne"]["ulps"]
    and close(E(T, "fp16", "rne")["sqnr_db"], e["tenth"]["fp16_rne"]["sqnr"], 1e-12)
    and E(T, "fp16", "rup")["max_ulp_error"] == e["tenth"]["fp16_rup"]["ulps"]
    and E(T, "fp16", "rup")["max_rel_error"] == e["tenth"]["fp16_rup"]["abs_rel"]
    and close(E(T, "fp16", "rup")["bias"], (10 * e["tenth"]["fp16_rup"]["rel"] + e["tenth"]["fp16_rne"]["rel"]) / 11)
    and E(T, "e4m3", "rne")["max_rel_error"] == e["tenth"]["e4m3_rne"]["abs_rel"]
    and E(T, "e4m3", "rne")["max_ulp_error"] == e["tenth"]["e4m3_rne"]["ulps"]
    and E(T, "fp16", "rne")["overflow"] == 0 and E(T, "fp16", "rne")["exact"] == 0
    and sum(E(T, "fp16", "rne")["ulp_hist"]) == 11
    and list(E(T, "fp16", "rne")) == ["measured", "overflow", "underflow", "exact", "mean_rel_error",
        "rms_rel_error", "max_rel_error", "bias", "max_ulp_error", "sqnr_db", "ulp_hist"]
    and list(d) == ["tool", "version", "kind", "formats", "round", "seed", "seeds", "tensors", "by_step",
        "total"]
    and list(d["tensors"][0]) == ["name", "file", "step", "dtype", "shape", "count", "zeros", "nonfinite",
        "formats"]
    and d["tensors"][0]["step"] is None and d["by_step"] == []'

# Uniform [1, 2) in bf16: the SQNR of an independent rounding, and the
# uniform-error model within 0.3 dB; RNE's bias is near 0, RTZ's about
# -ulp/2 / 1.5 relative.
good uniform --json - --formats bf16 --round rne,rtz "$tmp/uniform.npy"
check uniform 'close(E(T, "bf16", "rne")["sqnr_db"], e["sqnr"], 1e-12)
    and abs(E(T, "bf16", "rne")["sqnr_db"] - e["model"]) < 0.3
    and 0.499 < E(T, "bf16", "rne")["max_ulp_error"] <= 0.5
    and E(T, "bf16", "rne")["max_rel_error"] <= 2.0**-8
    and abs(E(T, "bf16", "rne")["bias"]) < 1e-4
    and E(T, "bf16", "rtz")["max_ulp_error"] < 1 and E(T, "bf16", "rtz")["bias"] < -1e-3
    and E(T, "bf16", "rtz")["sqnr_db"] < E(T, "bf16", "rne")["sqnr_db"] - 5'

# Overflow: counted apart, and not measured.
good ovf --json - --formats e4m3,fp16 --round rne,rtz "$tmp/dot.safetensors" "$tmp/uniform.npy"
check ovf 'T["count"] == 50011 and E(T, "e4m3", "rne")["overflow"] == 0'

# Errors.
error sumdot 2 'options --sum and --dot exclude each other' --sum --dot a b "$tmp/dot.safetensors"
error dotnone 2 '--dot: no tensor named "z" among the 3 found' --dot a z "$tmp/dot.safetensors"
error dotcount 2 '--dot: .*a has 4 elements but .*c has 3' --dot a c "$tmp/dot.safetensors"
error dotargs 2 'option --dot needs two arguments, A B' "$tmp/dot.safetensors" --dot a
error dotmatch 2 'option --match does not apply to --dot' --match a --dot a b "$tmp/dot.safetensors"
error seeds 2 'option --seeds applies to --sum and --dot only' --seeds 4 "$tmp/tenth.npy"
error seeds0 2 'option --seeds: "0" is not an integer from 1 to 100000' --sum --seeds 0 "$tmp/tenth.npy"
error badround 2 'unknown rounding mode "up"' --round rne,up "$tmp/tenth.npy"
error tworound 2 'option --round: rne is named twice' --round rne,RNE "$tmp/tenth.npy"
error emptyround 2 'option --round: an empty name in "rne,"' --round rne, "$tmp/tenth.npy"
error nozero 2 'option --sum: e8m0 has no zero for a sum to start from' --sum --formats fp16,e8m0 "$tmp/tenth.npy"
error nozero-dot 2 'option --dot: e8m0 has no zero' --dot a b --formats e8m0 "$tmp/dot.safetensors"
error badfmt 2 'unknown format "fp17"' --formats fp17 "$tmp/tenth.npy"
error missing 2 'nosuch\.npy: cannot open' "$tmp/nosuch.npy"
error nomatch 2 'no tensors to analyse: --match matched none of the 3 found' --match '^x' "$tmp/dot.safetensors"
error plotext 2 'option --plot: ".*x\.pdf" must end in \.png or \.svg' --plot "$tmp/x.pdf" "$tmp/tenth.npy"
error option 2 'unknown option "--bogus"' --bogus "$tmp/tenth.npy"
error overwrite 2 'tenth\.npy: is an input; fpround does not write over its inputs' --json "$tmp/tenth.npy" "$tmp/tenth.npy"
error shape 2 'give --dtype too' --shape 4 "$tmp/tenth.npy"
run usage
if [ "$(cat "$tmp/usage.rc")" -eq 2 ] && grep -q '^usage: fpround ' "$tmp/usage.err"; then
    ok
else
    bad "no PATH: status $(cat "$tmp/usage.rc"), or no usage on stderr"
fi
good help --help
has help '^usage: fpround '
good version --version
has version '^fpround \(fpkit [0-9]'

# Raw files: the tenths as raw f64 give the same errors.
python3 - "$tmp/tenth.npy" "$tmp/tenth.raw" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(data[10 + struct.unpack("<H", data[8:10])[0]:])
EOF
good raw --json - --formats fp16,e4m3 --round rne,rup --dtype f64 --shape 3,4 "$tmp/tenth.raw"
check raw 'T["formats"] == json.load(open(os.path.join(tmp, "tenth.out")))["total"]["formats"]
    and d["tensors"][0]["shape"] == [3, 4]'

# The usage lines of --help are the SYNOPSIS of the man page.
synopsis "$manpage" "$tmp/help.out"

# Every example of the man page runs on the bundled sample from the top of
# the source tree and exits 0 with nothing on stderr; those that write JSON
# write valid JSON, those that plot a file gnuplot made.
fpround_abs=$(cd "$(dirname "$FPROUND")" && pwd)/$(basename "$FPROUND")
srcdir_abs=$(cd "$srcdir" && pwd)
mkdir "$tmp/ex"
nex=0
sed -n 's/^\.Dl fpround //p' "$manpage" | sed 's/\\-/-/g' >"$tmp/examples"
while IFS= read -r line; do
    case $line in
    *'|'*) continue ;;
    *--plot*) [ "$have_gnuplot" = yes ] || { skipped "example needs gnuplot: fpround $line"; continue; } ;;
    esac
    nex=$((nex + 1))
    rc=0
    # Outputs named in the example go to $tmp/ex; inputs are read from the source tree.
    ex=$(printf '%s\n' "$line" | sed "s|tests/data/sample|$srcdir_abs/tests/data/sample|g")
    (cd "$tmp/ex" && eval "\"\$fpround_abs\" $ex") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/ex.err" ]; then
        ok
    else
        bad "man page example: fpround $line: status $rc: $(head -n 2 "$tmp/ex.err")"
    fi
done <"$tmp/examples"
if [ "$nex" -ge 4 ]; then ok; else bad "$manpage: only $nex examples run"; fi
for j in "$tmp"/ex/*.json; do
    [ -e "$j" ] || continue
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tool"] == "fpround"' "$j"; then
        ok
    else
        bad "man page example wrote invalid JSON: $j"
    fi
done

# Plots: the PNG has the size asked for, for the histogram and the running
# sums; SVG too; gnuplot's failure is a clear error.
if [ "$have_gnuplot" = yes ]; then
    mkdir "$tmp/plots"
    good plot --quiet --round rne,sr --plot "$tmp/plots/h.png" --plot-size 640x400 "$tmp/uniform.npy"
    if [ "$(png_size "$tmp/plots/h.png")" = 640x400 ]; then ok; else bad "plot: h.png not 640x400"; fi
    good plot-sum --quiet --sum --seeds 2 --plot "$tmp/plots/s.png" "$tmp/ones12.npy"
    if [ "$(png_size "$tmp/plots/s.png")" = 1000x600 ]; then ok; else bad "plot-sum: not 1000x600"; fi
    # Every series visible: the running sums over their error on a log
    # scale (a sum far off the others, as e5m2's, stays in view), the
    # histogram a panel per format.
    good plot-sum-svg --quiet --sum --seeds 2 --plot "$tmp/plots/s.svg" "$tmp/ones12.npy"
    good plot-hist-svg --quiet --round rne,sr --formats fp16,e5m2 --plot "$tmp/plots/h.svg" "$tmp/uniform.npy"
    if grep -q '|value - exact|' "$tmp/plots/s.svg" && grep -q '>e5m2 sr<' "$tmp/plots/s.svg" &&
        grep -q '>e5m2<' "$tmp/plots/h.svg" && grep -q '>fp16<' "$tmp/plots/h.svg"; then
        ok
    else
        bad "plots: no error panel, or no panel per format"
    fi
    good plot-dot --quiet --dot a b --seeds 2 --plot "$tmp/plots/d.svg" "$tmp/dot.safetensors"
    if grep -q '<svg' "$tmp/plots/d.svg"; then ok; else bad "plot-dot: no <svg>"; fi
    FPKIT_GNUPLOT=false
    export FPKIT_GNUPLOT
    error plotfail 3 'bad\.png: gnuplot failed' --quiet --plot "$tmp/plots/bad.png" "$tmp/tenth.npy"
    unset FPKIT_GNUPLOT
    left=$(cd "$tmp/plots" && find . -type f | sort | tr '\n' ' ')
    if [ "$left" = "./d.svg ./h.png ./h.svg ./s.png ./s.svg " ]; then ok; else bad "plots: files left behind: $left"; fi
else
    skipped "plots (no gnuplot)"
fi

# The sample: each tensor's step, and the steps' records the sums of
# their tensors' (the SQNR from the same sums).
good sample-json --json - "$srcdir/tests/data/sample"
check sample-json '[x["step"] for x in d["tensors"]] == [0] * 32 + [50] * 32 + [300] * 32 + [919] * 32
    and [b["step"] for b in d["by_step"]] == [0, 50, 300, 919] and [b["tensors"] for b in d["by_step"]] == [32] * 4
    and all(b[k] == sum(x[k] for x in d["tensors"] if x["step"] == b["step"])
            for b in d["by_step"] for k in ("count", "zeros", "nonfinite"))
    and all(E(b, f, "rne")[k] == sum(E(x, f, "rne")[k] for x in d["tensors"] if x["step"] == b["step"])
            for b in d["by_step"] for f in d["formats"] for k in ("measured", "underflow", "overflow", "exact"))
    and all(sum(E(b, f, "rne")[k] for b in d["by_step"]) == E(T, f, "rne")[k]
            for f in d["formats"] for k in ("measured", "underflow"))'

# The text on the sample: no line wider than 100 columns, with or without
# --all, with many formats and modes, for sums and dot products.
for args in "" "--all" "--round rne,rtz,rup,sr --formats fp16,bf16,e4m3,e5m2,tf32,e3m2 --all" \
    "--sum --match ^grad/ --seeds 2 --all" "--dot grad/fc1.weight weight/fc1.weight --seeds 2 --all"; do
    name=wide$(printf '%s' "$args" | tr -c 'a-z0-9' '_')
    # shellcheck disable=SC2086 # a list of options
    good "$name" $args "$srcdir/tests/data/sample"
    fits "$name"
done
# --top N rows, none with --top 0; every tensor and series with --all.
good top3 --top 3 "$srcdir/tests/data/sample"
good top0 --top 0 "$srcdir/tests/data/sample"
rows() { # rows NAME RE: the rows of the table under the line matching RE
    awk -v h="$2" 'f && /^$/ {f=0} f && /^  [^ ]/ && !/^  (tensor|step) / {n++} $0 ~ h {f=1} END {print n + 0}' "$tmp/$1.out"
}
if [ "$(rows top3 '^Worst 3 of 128 tensors')" = 3 ] && ! grep -q '^Worst\|^All ' "$tmp/top0.out" &&
    [ "$(rows wide__all '^Every tensor')" = $((129 * 4)) ] && ! grep -q '^Every' "$tmp/top3.out"; then
    ok
else
    bad "--top 3, --top 0 or --all: wrong rows"
fi
# The summary's numbers, the worst tensors and the steps are the JSON's.
good agree "$srcdir/tests/data/sample"
if python3 - "$tmp/agree.out" "$tmp/sample-json.out" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
rows, T = d["tensors"], d["total"]
E = lambda x, f: x["formats"][f]["rne"]
nz = lambda e: e["measured"] + e["overflow"]
def pct(n, dd):  # as the text writes a share
    return "0" if n == 0 else "100%" if n == dd else "%.2f%%" % (100 * n / dd)
summary = re.sub(r"\n    ", " ", text.split("\nSummary over ", 1)[1].split("\n\n", 1)[0])
for f in d["formats"]:
    e = E(T, f)
    if e["underflow"]:
        w = max(rows, key=lambda x: (E(x, f)["underflow"] / nz(E(x, f)) if nz(E(x, f)) else 0,
                                     E(x, f)["underflow"]))
        want = "%s: SQNR %.1f dB, but %s of the nonzero values flush to zero (worst: %s at step %d, %s)." % (
            f, e["sqnr_db"], pct(e["underflow"], nz(e)), w["name"], w["step"],
            pct(E(w, f)["underflow"], nz(E(w, f))))
    else:
        want = "%s: mean relative error %.1e, SQNR %.1f dB; nothing flushes" % (
            f, e["mean_rel_error"], e["sqnr_db"])
    assert want in summary, (want, summary)
def key(x):
    lost = [(E(x, f)["underflow"] + E(x, f)["overflow"]) / nz(E(x, f)) for f in d["formats"]]
    db = [E(x, f)["sqnr_db"] for f in d["formats"]]
    return (sum(lost) / len(lost), -sum(db) / len(db))
ranked = sorted(rows, key=key, reverse=True)[:10]
table = text.split("\nWorst ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
got = [l.split() for l in table]
assert [(g[0], int(g[1])) for g in got] == [(x["name"], x["step"]) for x in ranked], got
for g, x in zip(got, ranked):
    assert g[2:] == [c for f in d["formats"] for c in ("%.1f" % E(x, f)["sqnr_db"],
                     pct(E(x, f)["underflow"], nz(E(x, f))).rstrip("%"))], g
table = text.split("\nBy step, ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
assert [int(l.split()[0]) for l in table] == [b["step"] for b in d["by_step"]]
for l, b in zip(table, d["by_step"]):
    assert l.split()[1:] == [c for f in d["formats"] for c in ("%.1f" % E(b, f)["sqnr_db"],
                             pct(E(b, f)["underflow"], nz(E(b, f))).rstrip("%"))], l
EOF
then ok; else bad "agree: the summary and the JSON disagree"; fi
good agree-sum --sum --match '^grad/fc' --seeds 3 "$srcdir/tests/data/sample"
good agree-sum-json --json - --sum --match '^grad/fc' --seeds 3 "$srcdir/tests/data/sample"
if python3 - "$tmp/agree-sum.out" "$tmp/agree-sum-json.out" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
summary = re.sub(r"\n    ", " ", text.split("\nSummary: ", 1)[1].split("\n\n", 1)[0])
for f in d["formats"]:
    tf = d["total"]["formats"][f]
    parts = ["%s %.1e" % (meth, tf[meth][m]["max_abs_rel_error"]) for m in d["round"] for meth in tf]
    line = [l for l in summary.split("\n") if l.startswith("  %s:" % f)][0]
    for p in parts:
        assert p in line, (p, line)
# by step: the largest sequential (rne) error over the step's tensors
table = text.split("\nBy step, ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
for l, b in zip(table, d["by_step"]):
    assert l.split() == [str(b["step"])] + ["%.2e" % b["formats"][f]["sequential"]["rne"]["max_abs_rel_error"]
                                            for f in d["formats"]], l
EOF
then ok; else bad "agree-sum: the summary and the JSON disagree"; fi

# --threads: the same JSON with 1, 2 and 3 threads, SR included (each
# element's counter is its index, whatever thread rounds it).
for n in 1 2 3; do
    good "thr$n" --quiet --json - --round rne,sr --threads "$n" "$srcdir/tests/data/sample/step-000300.safetensors"
done
if cmp -s "$tmp/thr1.out" "$tmp/thr2.out" && cmp -s "$tmp/thr1.out" "$tmp/thr3.out"; then
    ok
else
    bad "--threads 2 or 3 changed the JSON"
fi
# Without --threads, a tensor of four pieces (2^16 elements) is shared
# among the CPUs it may run on.
zeros_npy "$tmp/zeros.npy" 262144
if [ "${FPK_OPENMP:-yes}" = no ]; then
    skipped "thrdef: threads by default (the library was built without OpenMP)"
else
    threads_by_default thrdef --quiet "$tmp/zeros.npy"
    # OMP_NUM_THREADS's first value (3: a team of 3 for the 4 pieces, 2
    # threads made), as nproc reads it; OMP_THREAD_LIMIT caps it
    for env in "OMP_NUM_THREADS=3,2 2" "OMP_NUM_THREADS=3 OMP_THREAD_LIMIT=2 1"; do
        if ! count_threads; then
            skipped "omp: ${env% *} (needs strace)"
            continue
        fi
        made=$(threads_made "$omp_unset ${env% *}" --quiet "$tmp/zeros.npy")
        if [ "$made" = "${env##* }" ]; then ok; else bad "omp: with ${env% *}: $made threads made"; fi
    done
fi
error threads0 2 'option --threads: "0" is not an integer from 1 to 1024' --threads 0 "$srcdir/tests/data/sample"

summary
