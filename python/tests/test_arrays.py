"""fpkit.quantize, encode, decode and convert: against ml_dtypes' astype
for every format the two share (a large random sample of float32 values
and every edge case: each value of the format, each midpoint between
neighbours, one float32 ulp either side of both, the specials), against
the C library's scalar conversion (tests/mldtypes_dump, fpk_convert per
element), and stochastic rounding against the rule of docs/DESIGN.md
"Stochastic rounding" written here with NumPy, reproducible from the
seed."""

import numpy as np
import pytest

import fpkit
from conftest import SEED, ml_dtypes_or_skip, run, tool

# fpkit format: ml_dtypes type name (numpy's own for fp16)
SHARED = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "e4m3fnuz": "float8_e4m3fnuz",
    "e5m2fnuz": "float8_e5m2fnuz",
    "e3m4": "float8_e3m4",
    "e3m2": "float6_e3m2fn",
    "e2m3": "float6_e2m3fn",
    "e2m1": "float4_e2m1fn",
    "e8m0": "float8_e8m0fnu",
}


def mltype(name):
    if name == "fp16":
        return np.float16
    ml = ml_dtypes_or_skip()
    if not hasattr(ml, SHARED[name]):
        pytest.skip(f"this ml_dtypes has no {SHARED[name]}")
    return getattr(ml, SHARED[name])


def inputs(name, rng):
    """float32 values aimed at FMT: its values, the midpoints, a float32 ulp
    either side of each, both signs, values scaled to its range, random
    bit patterns and the specials."""
    f = fpkit.format(name)
    if f.width <= 16:
        table = fpkit.decode(np.arange(1 << f.width, dtype=np.uint64).astype(
            np.uint8 if f.size == 1 else np.uint16), name).astype(np.float64)
    else:
        table = np.array([0.0, f.max])
    fin = np.unique(table[np.isfinite(table)])
    mids = (fin[:-1] + fin[1:]) / 2
    with np.errstate(over="ignore"):
        pts = np.concatenate([fin, mids, [2 * fin[-1] - fin[-2]]]).astype(np.float32)
    pts = pts[np.isfinite(pts)]
    near = np.concatenate([pts, np.nextafter(pts, np.float32(np.inf)),
                           np.nextafter(pts, np.float32(-np.inf))])
    big, small = float(fin[-1]), float(fin[fin > 0][0])
    with np.errstate(over="ignore"):
        scaled = np.concatenate([
            rng.standard_normal(200_000) * big / 3,
            rng.standard_normal(200_000) * small * 4,
            np.exp2(rng.uniform(np.log2(small) - 4, np.log2(big) + 2, 200_000)),
        ]).astype(np.float32)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    specials = np.array([0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1, -1,
                         np.finfo(np.float32).max, np.finfo(np.float32).tiny, 2.0**-149], np.float32)
    return np.concatenate([near, -near, scaled, -scaled, bits, specials]).astype(np.float32)


def e8m0_by_rule(x):
    """E8M0 of positive finite X: the nearest power of two, ties up, 2^-127
    for anything below it (docs/DESIGN.md "Special-value rules")."""
    m, e = np.frexp(x.astype(np.float64))
    return np.clip(np.where(m >= 0.75, e, e - 1) + 127, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("name", list(SHARED))
def test_against_ml_dtypes(name, rng):
    t = mltype(name)
    f = fpkit.format(name)
    x = inputs(name, rng)
    codes = fpkit.encode(x, name)
    got = bits(codes)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(t).view(got.dtype).copy()
    nan_in = np.isnan(x)
    ok = got == want
    # fpkit gives every NaN result its one canonical NaN (the sign bit alone
    # in the formats without NaN); ml_dtypes keeps a NaN's sign
    want_nan = np.isnan(want.view(t).astype(np.float64)) if f.special != "none" else False
    ok |= (nan_in | want_nan) & (got == f.nan)
    if name == "e8m0":  # float32 subnormals round on the powers of two (fpkit's rule)
        sub = (x > 0) & (x < np.float32(2.0**-126))
        assert np.array_equal(got[sub], e8m0_by_rule(x[sub]))
        ok |= sub
    bad = np.flatnonzero(~ok)
    print(f"float32 -> {name}: {x.size} cases, {bad.size} mismatches against ml_dtypes")
    assert bad.size == 0, [(x[i], got[i], want[i]) for i in bad[:5]]
    # quantize gives the values of those encodings, float32
    y = fpkit.quantize(x, name)
    assert y.dtype == np.float32 and y.shape == x.shape
    v = fpkit.decode(codes, name)
    assert np.array_equal(y.view(np.uint32), v.astype(np.float32).view(np.uint32))
    # ml_dtypes arrays in, as encodings: decode and a round trip
    if name != "fp16":
        assert np.array_equal(fpkit.decode(codes).view(np.uint32), v.view(np.uint32))


@pytest.mark.parametrize("name", [n for n in SHARED if fpkit.format(n).width <= 8])
def test_against_scalar_core(name, rng):
    """encode (the array paths, fpk_array_convert) against fpk_convert per
    element, as tests/mldtypes_dump writes it."""
    x = inputs(name, rng)
    want = np.frombuffer(run([tool("mldtypes_dump"), "convert", name], x.tobytes()), np.uint8)
    assert np.array_equal(bits(fpkit.encode(x, name)), want)
    vals = np.frombuffer(run([tool("mldtypes_dump"), "values", name]), np.float64)
    dec = fpkit.decode(np.arange(1 << fpkit.format(name).width, dtype=np.uint8), name)
    assert np.array_equal(dec.astype(np.float64), vals, equal_nan=True)


def bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def test_modes_fast_and_general(rng):
    """Every mode and option through the fast array paths (float32 in)
    against the general one (float64 in, fpk_convert element by element):
    the same bits and flags."""
    x = np.concatenate([inputs("e4m3", rng)[:50_000], inputs("bf16", rng)[:50_000]])
    for name in ("fp16", "bf16", "tf32", "e4m3", "e5m2", "e2m1", "e8m0", "e5m3"):
        for mode in ("rne", "rna", "rtz", "rup", "rdn", "rod", "sr"):
            for opts in ({}, {"ftz": True}, {"saturate": True}, {"daz": True}):
                z, fl = fpkit.encode(x, name, mode, flags=True, seed=7, **opts)
                w, fw = fpkit.encode(x.astype(np.float64), name, mode, flags=True, seed=7,
                                     **opts)
                if opts.get("daz"):  # a float32 subnormal is a float64 normal
                    continue
                assert np.array_equal(bits(z), bits(w)), (name, mode, opts)
                assert fl == fw, (name, mode, opts, fl, fw)


def sr_by_rule(x, seed, counter, sr_bits=32):
    """float32 X rounded into bf16 under SR by docs/DESIGN.md's rule, with
    NumPy: away from zero iff r < floor(frac * 2^sr_bits), r the top sr_bits
    bits of fpk_sr_hash(seed, counter + i)."""
    M = np.uint64(0xFFFFFFFFFFFFFFFF)

    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    with np.errstate(over="ignore"):
        i = np.arange(x.size, dtype=np.uint64) + np.uint64(counter)
        h = mix(mix(np.full(x.size, seed, np.uint64)) ^ (i * np.uint64(0x9E3779B97F4A7C15) +
                                                          np.uint64(0x632BE59BD9B4E019)) & M)
    r = h >> np.uint64(64 - sr_bits)
    b = x.view(np.uint32).astype(np.uint64)
    low = b & np.uint64(0xFFFF)  # the discarded bits: 16 below bf16's mantissa
    frac = low << np.uint64(sr_bits - 16) if sr_bits >= 16 else low >> np.uint64(16 - sr_bits)
    up = r < frac
    z = ((b >> np.uint64(16)) + up.astype(np.uint64)).astype(np.uint16)
    return z


def test_sr_rule_and_reproducibility(rng):
    # normal float32 values well inside bf16's range: neither overflow nor
    # subnormal results, so the rule alone decides
    x = (rng.standard_normal(1 << 18) * 100).astype(np.float32)
    x[x == 0] = 1
    for seed, counter, nbits in ((0, 0, 32), (SEED, 12345, 32), (2**64 - 1, 2**40, 20)):
        got = fpkit.encode(x, "bf16", "sr", seed=seed, counter=counter, sr_bits=nbits)
        assert np.array_equal(got.view(np.uint16), sr_by_rule(x, seed, counter, nbits))
        again = fpkit.encode(x, "bf16", "sr", seed=seed, counter=counter, sr_bits=nbits)
        assert np.array_equal(got.view(np.uint16), again.view(np.uint16))
    # element i draws with counter + i: an array split in two calls gives the whole
    whole = fpkit.quantize(x, "e4m3", "sr", seed=5)
    k = 1000
    a = fpkit.quantize(x[:k], "e4m3", "sr", seed=5)
    b = fpkit.quantize(x[k:], "e4m3", "sr", seed=5, counter=k)
    assert np.array_equal(np.concatenate([a, b]).view(np.uint32), whole.view(np.uint32))
    assert not np.array_equal(fpkit.quantize(x, "e4m3", "sr", seed=6), whole)
    # threads change nothing
    assert np.array_equal(fpkit.quantize(x, "e4m3", "sr", seed=5, threads=1).view(np.uint32),
                          fpkit.quantize(x, "e4m3", "sr", seed=5, threads=4).view(np.uint32))


def test_dtypes_in_and_out(rng):
    x = (rng.standard_normal(1000) * 10).astype(np.float32)
    y64 = fpkit.quantize(x.astype(np.float64), "bf16")
    assert y64.dtype == np.float64
    assert np.array_equal(y64, fpkit.quantize(x, "bf16").astype(np.float64))
    h = x.astype(np.float16)
    assert fpkit.quantize(h, "e4m3").dtype == np.float16  # e4m3's values are fp16 values
    assert fpkit.quantize(h, "bf16").dtype == np.float32  # bf16's are not
    assert fpkit.quantize(x, "fp64").dtype == np.float64
    assert np.array_equal(fpkit.quantize(h, "e4m3").astype(np.float32),
                          fpkit.quantize(h.astype(np.float32), "e4m3"))
    codes = fpkit.encode(x, "tf32")
    assert codes.dtype == np.uint32 and int(codes.max()) < 1 << 19
    assert np.array_equal(fpkit.decode(codes, "tf32"), fpkit.quantize(x, "tf32"))
    # in place
    z = x.copy()
    assert fpkit.quantize(z, "bf16", out=z) is z
    assert np.array_equal(z, fpkit.quantize(x, "bf16"))
    # non-contiguous and Fortran-ordered input
    m = (rng.standard_normal((40, 30)) * 3).astype(np.float32)
    assert np.array_equal(fpkit.quantize(m[::2, 1::3], "e5m2"),
                          fpkit.quantize(np.ascontiguousarray(m[::2, 1::3]), "e5m2"))
    assert np.array_equal(fpkit.quantize(np.asfortranarray(m), "e5m2"), fpkit.quantize(m, "e5m2"))
    # zero-size and 0-d
    assert fpkit.quantize(np.zeros((0, 7), np.float32), "fp16").shape == (0, 7)
    assert fpkit.quantize(np.float32(3.14159), "fp16") == np.float32(3.140625)
    assert fpkit.quantize([1e-8, 3.14159], "fp16").tolist() == [0.0, 3.140625]
    assert fpkit.quantize(1e-8, "fp16") == 0.0


def test_flags():
    x = np.float32([1, 1e-8, 70000, np.nan])
    _, fl = fpkit.quantize(x[:1], "fp16", flags=True)
    assert fl == 0
    _, fl = fpkit.quantize(x[:2], "fp16", flags=True)
    assert fl == fpkit.Flags.UNDERFLOW | fpkit.Flags.INEXACT
    _, fl = fpkit.quantize(x[:3], "fp16", flags=True)
    assert fl & fpkit.Flags.OVERFLOW
    y, fl = fpkit.quantize(x[2:3], "fp16", saturate=True, flags=True)
    assert y[0] == 65504 and fl & fpkit.Flags.OVERFLOW
    assert fpkit.quantize(x[3:], "e2m1", flags=True)[1] == fpkit.Flags.INVALID


def test_threads_of_the_caller(rng):
    """Calls from several Python threads at once (the GIL is released while
    the library works) give what they give one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    xs = [(rng.standard_normal(300_000) * 10 ** rng.uniform(-6, 3)).astype(np.float32)
          for _ in range(8)]

    def work(x):
        return (fpkit.quantize(x, "e4m3", "sr", seed=1).tobytes(),
                fpkit.encode(x, "bf16").tobytes(), fpkit.stats(x).to_json())

    alone = [work(x) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(work, xs))
    assert together == alone
