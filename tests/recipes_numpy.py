#!/usr/bin/env python3
"""Recomputes fpgrad --recipes' ranking independently, with NumPy.

usage: recipes_numpy.py FPGRAD_JSON SAFETENSORS...

Reads the safetensors files with a reader of its own, quantises every
tensor under fp8-tensor-current, fp8-block128, mxfp8-e4m3, mxfp4 and nvfp4
as their published descriptions say (float32 arithmetic where the
references use it, rounding to the element formats by a NumPy rounding of
its own), and checks fpgrad's JSON: each tensor's flushed, saturated and
subnormal counts exactly, its SQNR to 1e-9 dB, each recipe's median,
reference SQNR, keep threshold, kept tensors and the ranking.  Exits 1 with
the first difference.
"""
import json
import math
import struct
import sys

import numpy as np

F32 = np.float32


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise SystemExit(f"{path}: {name}: only F32 tensors here")
        a, b = info["data_offsets"]
        x = np.frombuffer(data[base + a : base + b], dtype="<f4").astype(F32)
        out.append((a, name, x.reshape(info["shape"]) if info["shape"] else x.reshape(())))
    out.sort(key=lambda t: t[0])  # the order of the data, as fpgrad reads them
    return [(name, x) for _, name, x in out]


class Elem:
    """A small float format: P fraction bits, least normal exponent EMIN,
    largest finite MAX; rounding to nearest even, done here in float64."""

    def __init__(self, man, emin, emax_val):
        self.man, self.emin, self.max = man, emin, emax_val

    def round(self, t):
        """(value rounded, unbounded above) for float64 T."""
        a = np.abs(t)
        with np.errstate(divide="ignore"):
            e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
        e = np.maximum(e, self.emin)
        ulp = np.ldexp(1.0, (e - self.man).astype(np.int64))
        q = np.rint(a / ulp) * ulp  # a / ulp is exact: a power of two
        return np.sign(t) * q

    def quantize(self, t):
        """Rounded, saturating; and which elements overflowed."""
        q = self.round(t)
        over = np.abs(q) > self.max
        q = np.where(over, np.sign(t) * self.max, q)
        return q, over

    def subnormal(self, q):
        a = np.abs(q)
        return (a > 0) & (a < 2.0**self.emin)


E4M3 = Elem(3, -6, 448.0)
E2M1 = Elem(1, 0, 6.0)
EMAX = {"e4m3": 8, "e2m1": 2}


def blocks_1d(x2d, width):
    """Yield (rows slice, column slice) of 1 x WIDTH blocks (WIDTH 0: a row)."""
    rows, cols = x2d.shape
    w = width or cols
    for j in range(0, cols, w):
        yield slice(0, rows), slice(j, min(j + w, cols))


def stats(x, y, q, over, elem):
    """Counts and sums over the nonzero finite X (all finite here)."""
    x = x.astype(np.float64).ravel()
    y = y.astype(np.float64).ravel()
    q = q.ravel()
    over = over.ravel()
    nz = x != 0
    return {
        "flushed": int(np.sum(nz & (q == 0))),
        "saturated": int(np.sum(nz & over)),
        "subnormal": int(np.sum(nz & elem.subnormal(q))),
        "x2": float(np.sum(x[nz] ** 2)),
        "e2": float(np.sum((y[nz] - x[nz]) ** 2)),
    }


def amax_recipe(x2d, block_cols):
    """e4m3 elements, an fp32 multiplier S = 448 / max(amax, 1e-12) per
    block (rounded once to float32), elements float32(x * S) into e4m3,
    decoded as float32(q * float32(1 / S))."""
    y = np.zeros_like(x2d)
    q = np.zeros(x2d.shape)
    over = np.zeros(x2d.shape, bool)
    w = block_cols or x2d.shape[1]
    for j in range(0, x2d.shape[1], w):
        blk = x2d[:, j : j + w]
        if block_cols:  # one block per row
            amaxes = np.max(np.abs(blk), axis=1, keepdims=True).astype(np.float64)
        else:
            amaxes = np.full((blk.shape[0], 1), float(np.max(np.abs(x2d))))
        s = F32(448.0 / np.maximum(amaxes, 1e-12))
        t = (blk * s).astype(F32)
        qq, ov = E4M3.quantize(t.astype(np.float64))
        dec = (F32(1.0) / s).astype(F32)
        y[:, j : j + w] = (qq.astype(F32) * dec).astype(F32)
        q[:, j : j + w] = qq
        over[:, j : j + w] = ov
    return y, q, over


def mx_recipe(x2d, elem, name):
    """OCP MX: blocks of 32 along a row, scale 2^k with k = floor(log2
    amax) - emax (clamped to E8M0's range), elements x * 2^-k rounded once."""
    rows, cols = x2d.shape
    y = np.zeros_like(x2d)
    q = np.zeros(x2d.shape)
    over = np.zeros(x2d.shape, bool)
    for j in range(0, cols, 32):
        blk = x2d[:, j : j + 32].astype(np.float64)
        amax = np.max(np.abs(blk), axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            k = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - EMAX[name]
        k = np.clip(k, -127, 127)
        t = np.ldexp(blk, (-k).astype(np.int64))  # exact in float64
        qq, ov = elem.quantize(t)
        y[:, j : j + 32] = np.ldexp(qq, k.astype(np.int64)).astype(F32)
        q[:, j : j + 32] = qq
        over[:, j : j + 32] = ov
    return y, q, over


def e4m3_rne(v):
    return E4M3.quantize(v.astype(np.float64))[0]


def nvfp4_recipe(x2d):
    """NVFP4 as Transformer Engine computes it: S_enc = 2688 / amax_tensor,
    per 16 elements D = E4M3(min(amax * (S_enc * (1/6)), 448)), elements
    float32(x * min(1 / (D * (1/S_enc)), FLT_MAX)) into E2M1."""
    rows, cols = x2d.shape
    amax_t = F32(np.max(np.abs(x2d))) if x2d.size else F32(0)
    s_enc = F32(F32(2688.0) / amax_t) if amax_t > 0 else F32(1)
    if not np.isfinite(s_enc):
        s_enc = F32(np.finfo(F32).max)
    if amax_t == 0 or s_enc == 0:
        s_enc = F32(1)
    glob = F32(F32(1) / s_enc)
    g6 = F32(s_enc * F32(F32(1) / F32(6)))
    y = np.zeros_like(x2d)
    q = np.zeros(x2d.shape)
    over = np.zeros(x2d.shape, bool)
    for j in range(0, cols, 16):
        blk = x2d[:, j : j + 16]
        amax = np.max(np.abs(blk), axis=1, keepdims=True).astype(F32)
        d = np.minimum((amax * g6).astype(F32), F32(448))
        d = e4m3_rne(d).astype(F32)
        dec = (d * glob).astype(F32)
        with np.errstate(divide="ignore"):
            enc = np.where(dec == 0, np.finfo(F32).max, np.minimum(F32(1) / dec, np.finfo(F32).max))
        enc = enc.astype(F32)
        t = (blk * enc).astype(F32)
        qq, ov = E2M1.quantize(t.astype(np.float64))
        y[:, j : j + 16] = (qq.astype(F32) * dec).astype(F32)
        q[:, j : j + 16] = qq
        over[:, j : j + 16] = ov
    return y, q, over


RECIPES = {
    "fp8-tensor-current": (lambda x: amax_recipe(x, 0), E4M3),
    "fp8-block128": (lambda x: amax_recipe(x, 128), E4M3),
    "mxfp8-e4m3": (lambda x: mx_recipe(x, E4M3, "e4m3"), E4M3),
    "mxfp4": (lambda x: mx_recipe(x, E2M1, "e2m1"), E2M1),
    "nvfp4": (nvfp4_recipe, E2M1),
}


def view(x):
    cols = x.shape[-1] if x.ndim else 1
    return x.reshape(-1, cols) if x.size else x.reshape(0, cols)


def db(x2, e2):
    if not x2 > 0:
        return None
    return math.inf if e2 == 0 else 10 * math.log10(x2 / e2)


def reference():
    """The fixed Gaussian sample: splitmix64, 20-bit variates, sums of 12
    less 6, 256 x 256 float32."""
    mask = (1 << 64) - 1
    state = 0
    vals = np.empty(256 * 256, dtype=F32)
    for i in range(256 * 256):
        m = -(6 << 20)
        for _ in range(12):
            state = (state + 0x9E3779B97F4A7C15) & mask
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            m += (z ^ (z >> 31)) >> 44
        vals[i] = F32(m) / F32(1 << 20)
    return vals.reshape(256, 256)


def median(pairs):
    """The least SQNR m whose tensors at m or worse hold half the elements."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    seen = 0
    for d, w in pairs:
        seen += w
        if 2 * seen >= total:
            return d
    return None


def close(a, b, what):
    """A (NumPy's: None, inf or a number) against B (the JSON's: null
    where there is no signal or no error)."""
    if a is None or math.isinf(a):
        if b is not None:
            raise SystemExit(f"{what}: fpgrad {b!r}, numpy {a!r}")
    elif b is None or abs(a - b) > 1e-9 * max(1.0, abs(a)):
        raise SystemExit(f"{what}: fpgrad {b!r}, numpy {a!r}")


def main():
    report = json.load(open(sys.argv[1]))
    tensors = []
    for path in sys.argv[2:]:
        tensors += read_safetensors(path)
    if len(tensors) != len(report["tensors"]):
        raise SystemExit(f"{len(report['tensors'])} tensors in the JSON, {len(tensors)} read")
    ref = reference()
    results = {}
    for name, (fn, elem) in RECIPES.items():
        per = []
        for (tname, x), row in zip(tensors, report["tensors"]):
            if row["name"] != tname:
                raise SystemExit(f"tensor order: {row['name']} vs {tname}")
            x2d = view(x)
            y, q, over = fn(x2d)
            st = stats(x2d, y, q, over, elem)
            got = row["recipes"][name]
            for k in ("flushed", "saturated", "subnormal"):
                if got[k] != st[k]:
                    raise SystemExit(f"{tname} under {name}: {k} fpgrad {got[k]}, numpy {st[k]}")
            d = db(st["x2"], st["e2"])
            close(d, got["sqnr_db"], f"{tname} under {name}: SQNR")
            per.append((tname, d, x.size))
        y, q, over = fn(ref)
        rs = stats(ref, y, q, over, elem)
        ref_db = db(rs["x2"], rs["e2"])
        keep_db = ref_db - 6.0
        med = median([(d, w) for _, d, w in per if d is not None])
        kept = [t for t, d, _ in per if d is not None and d < keep_db]
        results[name] = (med, ref_db, keep_db, kept)
    ranked = sorted(results, key=lambda n: -results[n][0])
    got_rank = [r["name"] for r in report["recipes"]]
    if got_rank != ranked:
        raise SystemExit(f"ranking: fpgrad {got_rank}, numpy {ranked}")
    for r in report["recipes"]:
        med, ref_db, keep_db, kept = results[r["name"]]
        close(med, r["median_sqnr_db"], f"{r['name']}: median")
        close(ref_db, r["reference_sqnr_db"], f"{r['name']}: reference SQNR")
        close(keep_db, r["keep_below_db"], f"{r['name']}: keep threshold")
        got_kept = [t["name"] for t in r["keep_bf16"]]
        if got_kept != kept:
            raise SystemExit(f"{r['name']}: keep in BF16: fpgrad {got_kept}, numpy {kept}")
    print(f"recipes_numpy: {len(tensors)} tensors x {len(RECIPES)} recipes agree; ranking "
          + ", ".join(f"{n} {results[n][0]:.2f} dB" for n in ranked))


if __name__ == "__main__":
    main()
