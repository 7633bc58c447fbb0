#!/bin/sh
# fpgrad's block-scaled (OCP MX) formats beside per-tensor ones on the bundled
# sample: `fpgrad --formats mxfp8,mxfp4,e4m3,bf16` and its numbers recomputed
# independently with numpy and ml_dtypes, tensor by tensor: the MX blocks of
# 32 along each tensor's last dimension, their scales by OCP MX v1.0 §6.3
# (floor(log2(amax)) - emax), the elements rounded by ml_dtypes and clamped
# to the largest normal, the counts of elements flushed to zero, left
# subnormal and saturated, and every format's SQNR.  Also: the SQNR where
# results overflow (against numpy, with 1 and 2 threads), MX names in the
# text report, --formats errors, and crafted tensors (f64 among them) whose
# answers are worked out by hand.  Skipped (77) without numpy and ml_dtypes.
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
need_python
need_modules 'numpy, ml_dtypes'

# The sample against numpy and ml_dtypes.
good sample --formats mxfp8,mxfp4,e4m3,bf16 --json - "$srcdir/tests/data/sample"
if "$py" - "$srcdir/tests/data/sample" "$tmp/sample.out" <<'EOF'
import json, os, sys
import ml_dtypes
import numpy as np

sample, out = sys.argv[1], sys.argv[2]
got = json.load(open(out))
MX = {"mxfp8": ml_dtypes.float8_e4m3fn, "mxfp4": ml_dtypes.float4_e2m1fn}
PER_TENSOR = {"e4m3": ml_dtypes.float8_e4m3fn, "bf16": ml_dtypes.bfloat16}


def params(t):
    fi = ml_dtypes.finfo(t)
    maxf = float(fi.max)
    emax = int(np.frexp(maxf)[1]) - 1
    m = int(fi.nmant)
    # RNE overflows at max + half an ulp, and at the tie itself when max's
    # last mantissa bit is odd (e2m1's 6 = 1.1 * 2^2: 7 overflows; e4m3's
    # 448 = 1.110 * 2^8: 464 rounds down)
    ulp = 2.0 ** (emax - m)
    odd = int(round(maxf / ulp)) % 2 == 1
    return maxf, emax, float(fi.smallest_normal), maxf + ulp / 2, odd


def mx(x, t):
    """Counts and error sums of one tensor X (float64, C order) in MX blocks."""
    maxf, emax, tiny, thr, odd = params(t)
    rowlen = x.shape[-1] if x.ndim else 1
    rows = x.reshape(-1, rowlen) if x.size else x.reshape(0, 1)
    under = sub = over = 0
    x2 = e2 = 0.0
    for row in rows:
        for b in range(0, rowlen, 32):
            v = row[b:b + 32]
            fin = np.isfinite(v)
            if not fin.all():  # a NaN scale: the finite nonzero elements are lost
                over += int(np.sum(fin & (v != 0)))
                continue
            amax = float(np.max(np.abs(v)))
            k = -127 if amax == 0 else min(max(int(np.frexp(amax)[1]) - 1 - emax, -127), 127)
            w = v * 2.0 ** -k
            a = np.abs(w)
            over += int(np.sum((a > thr) | ((a == thr) & odd)))
            r = np.clip(w, -maxf, maxf).astype(np.float32).astype(t).astype(np.float64)
            nz = v != 0
            under += int(np.sum(nz & (r == 0)))
            sub += int(np.sum((r != 0) & (np.abs(r) < tiny)))
            y = r * 2.0 ** k
            x2 += float(np.sum(v[nz] ** 2))
            e2 += float(np.sum((y[nz] - v[nz]) ** 2))
    return (under, sub, over), (x2, e2)


def per_tensor(x, t):
    """Counts and error sums of X rounded into T (round to nearest even)."""
    tiny = float(ml_dtypes.finfo(t).smallest_normal)
    v = x[np.isfinite(x) & (x != 0)]
    with np.errstate(over="ignore", invalid="ignore"):
        r = v.astype(np.float32).astype(t).astype(np.float64)
    ok = np.isfinite(r)
    counts = (int(np.sum(r == 0)), int(np.sum((r != 0) & ok & (np.abs(r) < tiny))),
              int(np.sum(~ok)))
    return counts, (float(np.sum(v[ok] ** 2)), float(np.sum((r[ok] - v[ok]) ** 2)))


def tensors(path):
    """(name, values as float64 in their shape) of a safetensors file of
    float32 tensors, in the file's order, the order fpgrad reports."""
    blob = open(path, "rb").read()
    size = int.from_bytes(blob[:8], "little")
    for key, t in json.loads(blob[8:8 + size]).items():
        if key != "__metadata__":
            lo, hi = t["data_offsets"]
            x = np.frombuffer(blob, "<f4", (hi - lo) // 4, 8 + size + lo)
            yield key, x.astype(np.float64).reshape(t["shape"])


def sqnr(err):
    return None if err[0] == 0 or err[1] == 0 else 10 * np.log10(err[0] / err[1])


problems = []
compared = 0
total = {f: [[0, 0, 0], [0.0, 0.0]] for f in list(MX) + list(PER_TENSOR)}
rows = iter(got["tensors"])
for name in sorted(f for f in os.listdir(sample) if f.endswith(".safetensors")):
    for key, x in tensors(os.path.join(sample, name)):
        row = next(rows)
        if row["name"] != key:
            problems.append(f"{name}: tensor {row['name']}, expected {key}")
            continue
        for fmt, ty in list(MX.items()) + list(PER_TENSOR.items()):
            counts, err = (mx if fmt in MX else per_tensor)(x, ty)
            g = row["formats"][fmt]
            compared += 1
            if (g["underflow"], g["subnormal"], g["overflow"]) != counts:
                problems.append(f"{key} {fmt}: {(g['underflow'], g['subnormal'], g['overflow'])}"
                                f", expected {counts}")
            want = sqnr(err)
            if (want is None) != (g["sqnr_db"] is None) or (
                    want is not None and abs(g["sqnr_db"] - want) > 1e-9 * abs(want) + 1e-9):
                problems.append(f"{key} {fmt}: SQNR {g['sqnr_db']}, expected {want}")
            for i in range(3):
                total[fmt][0][i] += counts[i]
            total[fmt][1][0] += err[0]
            total[fmt][1][1] += err[1]
for fmt, (counts, err) in total.items():
    g = got["total"]["formats"][fmt]
    compared += 1
    if [g["underflow"], g["subnormal"], g["overflow"]] != counts:
        problems.append(f"total {fmt}: {(g['underflow'], g['subnormal'], g['overflow'])}, "
                        f"expected {counts}")
    want = sqnr(err)
    if abs(g["sqnr_db"] - want) > 1e-9 * abs(want):
        problems.append(f"total {fmt}: SQNR {g['sqnr_db']}, expected {want}")
print(f"check_fpgrad_mx: sample: {compared} tensor and format cases, {len(problems)} mismatches")
for p in problems[:10]:
    print("check_fpgrad_mx: mismatch:", p)
sys.exit(1 if problems else 0)
EOF
then ok; else bad "sample: fpgrad's numbers differ from numpy and ml_dtypes'"; fi

# A crafted tensor, answers by hand: one row of 40 = a block of 32 and one
# of 8.  Block 1: 7 and 1, 2, 3 (amax 7 = 1.75 * 2^2: MXFP4's k = 0, so 7
# rounds to 8 and saturates at 6; 1, 2 and 3 are exact), 28 zeros.  Block 2:
# 100 (k = 6 - 2 = 4: 100 / 16 = 6.25 rounds to 6), 7 (7 / 16 rounds to the
# subnormal 0.5), 0.5 and -0.25 (flushed), 4 zeros.  MXFP8 (e4m3, emax 8):
# block 1 has k = 2 - 8 = -6, every V * 64 exact (7 * 64 = 448, the
# largest); block 2 k = 6 - 8 = -2: 100 * 4 = 400 ties between 384 and 416
# and goes to 384 (even), 7 * 4, 0.5 * 4 and -0.25 * 4 are exact.
"$py" -c '
import numpy as np, sys
x = np.zeros(40, "<f4")
x[:4] = [7, 1, 2, 3]
x[32:36] = [100, 7, 0.5, -0.25]
np.save(sys.argv[1], x.reshape(1, 40))' "$tmp/crafted.npy"
good crafted --formats mxfp4,mxfp8 --json - "$tmp/crafted.npy"
if python3 - "$tmp/crafted.out" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["total"]["formats"]
c = lambda k: (f[k]["underflow"], f[k]["subnormal"], f[k]["overflow"])
assert c("mxfp4") == (2, 1, 1), c("mxfp4")
assert c("mxfp8") == (0, 0, 0), c("mxfp8")
# MXFP4's errors: 7 -> 6 (1), 100 -> 96 (4), 7 -> 8 (1), 0.5 -> 0, -0.25 -> 0;
# MXFP8's: 100 -> 96 (4) alone
import math
x2 = 49 + 1 + 4 + 9 + 10000 + 49 + 0.25 + 0.0625
e2 = 1 + 16 + 1 + 0.25 + 0.0625
assert abs(f["mxfp4"]["sqnr_db"] - 10 * math.log10(x2 / e2)) < 1e-9, f["mxfp4"]["sqnr_db"]
assert abs(f["mxfp8"]["sqnr_db"] - 10 * math.log10(x2 / 16)) < 1e-9, f["mxfp8"]["sqnr_db"]
EOF
then ok; else bad "crafted: fpgrad's MX counts differ from the hand-worked ones"; fi

# f64 elements read as float32: a block whose elements all lie below
# float32's least subnormal, or round to its least (2^-149, which MXFP8's
# least scale 2^-127 leaves below e4m3's least subnormal 2^-9), underflows
# whole; one with 1e39, beyond float32, is a NaN block.
"$py" -c '
import numpy as np, sys
x = np.array([1e-50] * 31 + [1e-45] + [1e39] + [1.0] * 31)
np.save(sys.argv[1], x.reshape(1, 64))' "$tmp/f64.npy"
good f64 --formats mxfp8 --json - "$tmp/f64.npy"
if python3 - "$tmp/f64.out" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["total"]["formats"]["mxfp8"]
assert (f["underflow"], f["subnormal"], f["overflow"]) == (32, 0, 32), f
EOF
then ok; else bad "f64: elements below float32's range do not count as MX underflow"; fi

# The same as float32, in rows of 48 (blocks of 32 and 16): the least
# subnormal flushes; a block with an infinity (15 ones) and one with a NaN
# (16 ones and 15 twos) are NaN blocks, whose 46 nonzero finite elements
# overflow (the infinity and the NaN are counted as such, not here).
"$py" -c '
import numpy as np, sys
x = np.array([0] * 31 + [1e-45] + [np.inf] + [1] * 31 + [np.nan] + [2] * 30 + [0], "<f4")
np.save(sys.argv[1], x.reshape(2, 48))' "$tmp/f32nan.npy"
good f32nan --formats mxfp8,mxfp4 --json - "$tmp/f32nan.npy"
if python3 - "$tmp/f32nan.out" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["total"]["formats"]
for name in ("mxfp8", "mxfp4"):
    got = (f[name]["underflow"], f[name]["subnormal"], f[name]["overflow"])
    assert got == (1, 0, 46), (name, f[name])
EOF
then ok; else bad "f32nan: the elements of NaN blocks are not counted as overflow once each"; fi

# The SQNR where results overflow (e4m3 and fp16 give NaN and inf, which
# the SQNR leaves out, element and error both), against numpy and
# ml_dtypes, with 1 and 2 threads.
"$py" -c '
import numpy as np, sys
rng = np.random.default_rng(5)
x = (rng.standard_normal(100000) * rng.choice([1e-3, 1, 300, 1e5], 100000)).astype("<f4")
x[::7] = 0
np.save(sys.argv[1], x)' "$tmp/ovf.npy"
for n in 1 2; do
    good "ovf$n" --quiet --formats e4m3,fp16,bf16 --threads "$n" --json - "$tmp/ovf.npy"
done
if cmp -s "$tmp/ovf1.out" "$tmp/ovf2.out" && "$py" - "$tmp/ovf.npy" "$tmp/ovf1.out" <<'EOF'
import json, sys
import ml_dtypes
import numpy as np
x = np.load(sys.argv[1]).astype(np.float64)
f = json.load(open(sys.argv[2]))["total"]["formats"]
with np.errstate(over="ignore"):
    for name, dt in (("e4m3", ml_dtypes.float8_e4m3fn), ("fp16", np.float16),
                     ("bf16", ml_dtypes.bfloat16)):
        v = x.astype(np.float32).astype(dt).astype(np.float64)
        ok = (x != 0) & np.isfinite(v)
        want = 10 * np.log10(np.sum(x[ok] ** 2) / np.sum((v[ok] - x[ok]) ** 2))
        assert abs(f[name]["sqnr_db"] - want) <= 1e-12 * abs(want), (name, f[name], want)
EOF
then ok; else bad "ovf: the SQNR with overflowing results differs from numpy's, or with 2 threads"; fi

# A float32 tensor of several chunks (2^18 elements each), read once for
# the statistics and the errors: its chunks shared among 2 and 3 threads,
# each with statistics of its own, give one thread's JSON, per-tensor and
# MX formats alike (under SR too: each element's counter is its index,
# whichever thread reads it).
"$py" -c '
import numpy as np, sys
rng = np.random.default_rng(7)
x = (rng.standard_normal(700001) * rng.choice([1e-6, 1e-3, 1, 1e5], 700001)).astype("<f4")
x[::5] = 0
x[123457] = np.inf
np.save(sys.argv[1], x)' "$tmp/big.npy"
for r in rne rtz sr; do
    for n in 1 2 3; do
        good "big$r$n" --quiet --formats fp16,bf16,e4m3,e5m2,mxfp8,mxfp4 --round "$r" \
            --threads "$n" --json - "$tmp/big.npy"
    done
    if cmp -s "$tmp/big${r}1.out" "$tmp/big${r}2.out" &&
        cmp -s "$tmp/big${r}1.out" "$tmp/big${r}3.out"; then
        ok
    else
        bad "big: --threads 2 or 3 changed the $r JSON of a tensor read once"
    fi
done

# The SQNR's sums are the same bits in plain C as in the AVX-512 code
# (FPK_ISA=c), whatever rounds the errors: nearest, directed, stochastic
# or to odd; subnormals, zeros, infinities, NaNs and overflows among them.
"$py" -c '
import numpy as np, sys
rng = np.random.default_rng(9)
n = 300007
x = (rng.standard_normal(n) * np.exp2(rng.integers(-150, 20, n))).astype("<f4")
x[rng.integers(0, n, n // 3)] = 0
x[5], x[77], x[1000], x[1001] = np.inf, np.nan, 3e38, 1e-45
x[2000:2100] = 65520
np.save(sys.argv[1], x)' "$tmp/isa.npy"
i=0
for opts in "" "--round rup" "--round sr" "--round rtz" "--round rna" \
    "--formats mxfp8,mxfp4,e4m3,tf32,e2m1 --round rne" "--formats mxfp8_e5m2,e5m2 --round sr" \
    "--formats e3m2,fp16 --round rod" "--scale 3"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    good "isa$i" --json - $opts "$tmp/isa.npy"
    # shellcheck disable=SC2086
    FPK_ISA=c good "isa${i}c" --json - $opts "$tmp/isa.npy"
    if cmp -s "$tmp/isa$i.out" "$tmp/isa${i}c.out"; then ok; else bad "isa $opts: FPK_ISA=c changed the JSON"; fi
done

# The text names the MX formats, each line of the verdict with its SQNR,
# and their columns in the tables.
good text --formats mxfp8,mxfp6,mxfp4,e4m3 --all "$srcdir/tests/data/sample"
has text '^  mxfp8  MX blocks of 32: .*; SQNR [0-9.]+ dB$' \
    '^  mxfp6  MX blocks of 32: .*; SQNR [0-9.]+ dB$' '^  mxfp4  MX blocks of 32: .*; SQNR [0-9.]+ dB$' \
    '^  e4m3   .*; SQNR [0-9.]+ dB$' '^  tensor +step +nonzero +mxfp8 +mxfp6 +mxfp4 +e4m3$' \
    '^mxfp8, % of the nonzero values:$' '^mxfp4, % of the nonzero values:$'
error twice 2 'mxfp8 is named twice' --formats mxfp8,mxfp8_e4m3 "$srcdir/tests/data/sample"
error unknown 2 'unknown format "mxfp5"' --formats mxfp5 "$srcdir/tests/data/sample"

summary
