"""fpkit against ml_dtypes (run by tests/check_mldtypes.sh).

For each format both have: the value of every encoding (fpkit's
fpk_to_double, through tests/mldtypes_dump), and float32 values rounded
into the format under round-to-nearest-even: random bit patterns, normal
values scaled to the format's range, every value of the format and every
midpoint between neighbours, each also one float32 ulp either side, and
the specials.  Then OCP MX v1.0 quantisation of random blocks of 32
(fpk_mx_quantize) against the same rule written here with numpy, the
elements rounded by ml_dtypes.

Where the two differ by design, this script says so and checks fpkit's
rule by other means:
  - NaN: fpkit gives every NaN result its one canonical NaN, whatever the
    sign or payload of the NaN it came from; ml_dtypes keeps the sign
    (e4m3 0xff for -NaN or a negative overflow).  A NaN from ml_dtypes
    must be fpkit's canonical NaN.  The formats without NaN (FP6, FP4)
    take ml_dtypes' encoding of the positive NaN for every NaN (the sign
    bit alone); ml_dtypes flips the sign of a negative NaN into +0.
  - E8M0 of a float32 subnormal (below 2^-126): ml_dtypes rounds those on a
    grid of steps of 2^-126, fpkit on the grid of powers of two, as every
    other E8M0 value (ties up; below 2^-127 after rounding, 2^-127).  They
    are checked against that rule, computed here with frexp.
Exit 0 when all agree, 1 with the first mismatches printed otherwise."""

import subprocess
import sys

import ml_dtypes
import numpy as np

DUMP = sys.argv[1]
SEED = 20240611
rng = np.random.default_rng(SEED)
print(f"check_mldtypes: seed {SEED}, ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")

# fpkit name: ml_dtypes type, width in bits, fpkit's canonical NaN
FORMATS = {
    "e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 8),
    "e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 8),
    "e3m2": (ml_dtypes.float6_e3m2fn, 6),
    "e2m3": (ml_dtypes.float6_e2m3fn, 6),
    "e2m1": (ml_dtypes.float4_e2m1fn, 4),
    "e8m0": (ml_dtypes.float8_e8m0fnu, 8),
    "e3m4": (ml_dtypes.float8_e3m4, 8),
    "e4m3": (ml_dtypes.float8_e4m3fn, 8),
    "e5m2": (ml_dtypes.float8_e5m2, 8),
}
MX_ELEMENTS = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]

failures = 0
total = 0


def report(label, n, bad, describe):
    """Counts N cases of which the indices BAD mismatched."""
    global failures, total
    total += n
    failures += len(bad)
    print(f"check_mldtypes: {label}: {n} cases, {len(bad)} mismatches")
    for i in bad[:5]:
        print(f"check_mldtypes: mismatch: {label}: {describe(i)}")


def dump(*args, data=b""):
    r = subprocess.run([DUMP, *args], input=data, capture_output=True, check=False)
    if r.returncode != 0:
        sys.exit(f"check_mldtypes: {DUMP} {' '.join(args)}: {r.stderr.decode().strip()}")
    return r.stdout


# The OCP MX v1.0 figures, from ml_dtypes: a check that the two sides of
# this comparison are the formats the specification describes.
def spec_values():
    e2m1 = np.arange(8, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    assert list(e2m1) == [0, 0.5, 1, 1.5, 2, 3, 4, 6], e2m1
    assert float(ml_dtypes.finfo(ml_dtypes.float6_e2m3fn).max) == 7.5
    assert float(ml_dtypes.finfo(ml_dtypes.float6_e3m2fn).max) == 28
    e8m0 = np.array([0, 127, 254], np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    assert list(e8m0) == [2.0**-127, 1, 2.0**127], e8m0
    print("check_mldtypes: OCP MX values (E2M1, E2M3 and E3M2 max, E8M0 range): 4 cases, "
          "0 mismatches")


def values(name, t, width):
    got = np.frombuffer(dump("values", name), np.float64)
    want = np.arange(1 << width, dtype=np.uint8).view(t).astype(np.float64)
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    same |= np.isnan(got) & np.isnan(want)
    report(f"{name} every encoding's value", len(want), np.flatnonzero(~same),
           lambda i: f"encoding {i:#x}: {got[i]!r}, ml_dtypes {want[i]!r}")
    return want


def inputs(table):
    """float32 values aimed at the format whose values are TABLE."""
    fin = np.unique(table[np.isfinite(table)])
    mids = (fin[:-1] + fin[1:]) / 2
    pts = np.concatenate([fin, mids, [2 * fin[-1] - fin[-2]]]).astype(np.float32)
    pts = pts[np.isfinite(pts)]
    near = np.concatenate([pts, np.nextafter(pts, np.float32(np.inf)),
                           np.nextafter(pts, np.float32(-np.inf))])
    big = float(fin[-1])
    small = float(fin[fin > 0][0])
    with np.errstate(over="ignore"):  # e8m0's range reaches float32's
        scaled = np.concatenate([
            rng.standard_normal(100000) * big / 3,
            rng.standard_normal(100000) * small * 4,
            np.exp2(rng.uniform(np.log2(small) - 4, np.log2(big) + 2, 100000)),
        ]).astype(np.float32)
    randbits = rng.integers(0, 1 << 32, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    specials = np.array([0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1, -1,
                         np.finfo(np.float32).max, np.finfo(np.float32).tiny,
                         np.float32(2.0**-149)], np.float32)
    x = np.concatenate([near, -near, scaled, -scaled, randbits, specials]).astype(np.float32)
    return x


def e8m0_by_rule(x):
    """E8M0 of positive finite X: the nearest power of two, ties up, 2^-127
    for anything below it (fpkit's rule, computed with frexp)."""
    m, e = np.frexp(x.astype(np.float64))  # x = m * 2^e, m in [0.5, 1)
    k = np.where(m >= 0.75, e, e - 1)
    return np.clip(k + 127, 0, 255).astype(np.uint8)


def convert(name, t, table):
    x = inputs(table)
    got = np.frombuffer(dump("convert", name, data=x.tobytes()), np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(t).view(np.uint8).copy()
        nan_code = np.array([np.nan], np.float32).astype(t).view(np.uint8)[0]
    want[np.isnan(x)] = nan_code  # fpkit: one NaN, whatever the input's sign
    wantv = want.view(t).astype(np.float64)
    ok = got == want
    has_nan = np.isnan(np.array([nan_code], np.uint8).view(t).astype(np.float64))[0]
    if has_nan:  # any NaN of ml_dtypes is fpkit's canonical NaN
        ok |= np.isnan(wantv) & (got == nan_code)
    label = f"float32 -> {name}"
    if name == "e8m0":
        sub = (x > 0) & (x < np.float32(2.0**-126))
        n = int(np.count_nonzero(sub))
        rule = e8m0_by_rule(x[sub])
        bad = np.flatnonzero(got[sub] != rule)
        xs = x[sub]
        report(f"{label}, float32 subnormals by the power-of-two rule", n, bad,
               lambda i: f"{xs[i]!r}: {got[sub][i]:#x}, rule {rule[i]:#x}")
        ok |= sub
        label += " (float32 normals)"
    report(label, len(x) - (n if name == "e8m0" else 0), np.flatnonzero(~ok),
           lambda i: f"{x[i]!r} ({x[i:i+1].view(np.uint32)[0]:#010x}): {got[i]:#x}, "
                     f"ml_dtypes {want[i]:#x}")


def mx_blocks(name, t, rule):
    """fpk_mx_quantize against OCP MX v1.0 §6.3 written here: per block of
    32, k = floor(log2(amax)) - emax (ceil: the least k with amax / 2^k <=
    max finite), clamped to [-127, 127]; elements V / 2^k clamped to max
    finite and rounded by ml_dtypes; a block with a NaN or an infinity gets
    the NaN scale and the NaN in every element."""
    fi = ml_dtypes.finfo(t)
    maxf, emax = float(fi.max), int(np.frexp(float(fi.max))[1]) - 1
    nblocks = 2000
    # blocks of very different magnitudes, some with zeros, tiny values, a
    # NaN or an infinity
    mags = np.exp2(rng.uniform(-140, 120, nblocks))
    x = (rng.standard_normal((nblocks, 32)) * mags[:, None]).astype(np.float32)
    x[rng.random((nblocks, 32)) < 0.05] = 0
    x[rng.random((nblocks, 32)) < 0.05] *= np.float32(2.0**-20)
    x[rng.integers(0, nblocks, 10), rng.integers(0, 32, 10)] = np.nan
    x[rng.integers(0, nblocks, 10), rng.integers(0, 32, 10)] = -np.inf
    x[rng.integers(0, nblocks, 5)] = 0
    # blocks whose largest magnitude is max finite times a power of two, or
    # a float32 ulp either side: where the rounded-up rule turns
    edge = rng.integers(0, nblocks, 300)
    x[edge] = np.clip(x[edge], np.float32(-1e-30), np.float32(1e-30))
    amaxes = (maxf * np.exp2(rng.integers(-100, 100, 300))).astype(np.float32)
    x[edge, 0] = np.where(rng.random(300) < 0.5, amaxes,
                          np.nextafter(amaxes, np.where(rng.random(300) < 0.5, 0, np.inf)
                                       .astype(np.float32)))
    flat = x.reshape(-1)
    out = dump("mx", name, rule, "32", data=flat.tobytes())
    got_scale = np.frombuffer(out[:nblocks], np.uint8)
    got_enc = np.frombuffer(out[nblocks:nblocks + flat.size], np.uint8).reshape(nblocks, 32)
    got_y = np.frombuffer(out[nblocks + flat.size:], np.float32).reshape(nblocks, 32)

    with np.errstate(invalid="ignore", over="ignore"):
        nan_code = np.array([np.nan], np.float32).astype(t).view(np.uint8)[0]
        bad = []
        for b in range(nblocks):
            v = x[b].astype(np.float64)
            if not np.all(np.isfinite(v)):
                scale, enc, y = 255, np.full(32, nan_code, np.uint8), np.full(32, np.nan)
            else:
                amax = float(np.max(np.abs(v)))
                if amax == 0:
                    k = -127
                else:
                    k = int(np.frexp(amax)[1]) - 1 - emax
                    if rule == "ceil" and amax * 2.0**-k > maxf:
                        k += 1
                    k = min(max(k, -127), 127)
                # exact in float32 but for values far below the element's
                # smallest subnormal, which round to zero either way
                w = np.clip((v * 2.0**-k).astype(np.float32), -maxf, maxf)
                enc = w.astype(t).view(np.uint8)
                y = enc.view(t).astype(np.float64) * 2.0**k
                scale = k + 127
            same = (got_scale[b] == scale and np.array_equal(got_enc[b], enc) and
                    np.array_equal(got_y[b].astype(np.float64), y, equal_nan=True) and
                    np.array_equal(np.signbit(got_y[b]), np.signbit(y)))
            if not same:
                bad.append((b, scale, enc, y))
    report(f"MX {name} {rule}: blocks of 32", nblocks, list(range(len(bad))),
           lambda i: f"block {bad[i][0]}: scale {got_scale[bad[i][0]]}, "
                     f"expected {bad[i][1]}; elements {got_enc[bad[i][0]][:6]} expected "
                     f"{bad[i][2][:6]}")


spec_values()
for name, (t, width) in FORMATS.items():
    table = values(name, t, width)
    convert(name, t, table)
for name in MX_ELEMENTS:
    for rule in ("floor", "ceil"):
        mx_blocks(name, FORMATS[name][0], rule)
print(f"check_mldtypes: total: {total} cases, {failures} mismatches")
sys.exit(1 if failures else 0)
