"""Arithmetic on encodings against fpvectors' lines (operands, the
correctly rounded result and the flags, as libfpkit computes them and
make check holds them to MPFR): every operation, several formats, every
deterministic mode and the options."""

import numpy as np
import pytest

import fpkit
from conftest import run, tool

# TestFloat's flag bits (fpvectors(1)) as fpkit.Flags
TF_FLAGS = [(1, fpkit.Flags.INEXACT), (2, fpkit.Flags.UNDERFLOW), (4, fpkit.Flags.OVERFLOW),
            (8, fpkit.Flags.DIVBYZERO), (16, fpkit.Flags.INVALID)]
OPS = {"add": fpkit.add, "sub": fpkit.sub, "mul": fpkit.mul, "div": fpkit.div, "fma": fpkit.fma,
       "sqrt": fpkit.sqrt, "eq": fpkit.eq, "lt": fpkit.lt, "le": fpkit.le,
       "eq_signaling": fpkit.eq_signaling, "lt_signaling": fpkit.lt_signaling,
       "le_signaling": fpkit.le_signaling, "to_int": fpkit.to_int64}


# every mode, each option with some
MODES = [("rne", []), ("rna", ["--saturate"]), ("rtz", ["--ftz"]), ("rup", ["--daz"]),
         ("rdn", ["--saturate"]), ("rod", ["--ftz"]), ("rne", ["--daz", "--saturate"])]


def tf_flags(v):
    return sum(int(f) for bit, f in TF_FLAGS if v & bit)


def vectors(op, fmt, mode, opts, n):
    text = run([tool("fpvectors"), "--op", op, "--format", fmt, "--round", mode, *opts, "-n",
                str(n)]).decode()
    return np.array([[int(w, 16) for w in line.split()] for line in text.splitlines()],
                    dtype=np.uint64)


def container(fmt, v):
    """tf32 travels in fpvectors' lines as its 32-bit container."""
    return v >> np.uint64(13) if fmt == "tf32" else v


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e4m3", "tf32", "e2m1", "e4m3fnuz", "fp64",
                                 "e8m0"])
def test_against_fpvectors(fmt):
    n = cases = 0
    for op, fn in OPS.items():
        if op == "to_int" and fmt == "fp64":
            continue
        for mode, opts in MODES:
            v = vectors(op, fmt, mode, opts, 600)
            k = {"sqrt": 1, "fma": 3, "to_int": 1}.get(op, 2)
            args = [container(fmt, v[:, i]) for i in range(k)]
            z, fl = fn(*args, fmt=fmt, round=mode, ftz="--ftz" in opts, daz="--daz" in opts,
                       saturate="--saturate" in opts, flags=True)
            want = v[:, k]
            if op == "to_int":
                got = np.asarray(z).view(np.uint64)
            elif op in ("eq", "lt", "le") or op.endswith("_signaling"):
                got = np.asarray(z).astype(np.uint64)
            else:
                got = np.asarray(z).view(f"u{np.asarray(z).dtype.itemsize}").astype(np.uint64)
                want = container(fmt, want)
            assert np.array_equal(got, want), (op, fmt, mode, opts)
            # the flags of the call are the OR of the lines'
            assert fl == tf_flags(int(np.bitwise_or.reduce(v[:, k + 1]))), (op, mode, opts)
            # and element by element: each line alone
            for i in range(0, len(v), 97):
                _, f1 = fn(*[int(a[i]) for a in args], fmt=fmt, round=mode,
                           ftz="--ftz" in opts, daz="--daz" in opts,
                           saturate="--saturate" in opts, flags=True)
                assert f1 == tf_flags(int(v[i, k + 1])), (op, mode, opts, i)
            n += 1
            cases += len(v)
    print(f"{fmt}: {n} runs of fpvectors, {cases} cases, 0 mismatches")


def test_from_int_against_fpvectors():
    for fmt in ("fp16", "e4m3", "bf16", "e2m1"):
        for mode in ("rne", "rtz", "rup", "rod"):
            v = vectors("from_int", fmt, mode, [], 500)
            z, fl = fpkit.from_int64(v[:, 0].view(np.int64), fmt, mode, flags=True)
            assert np.array_equal(np.asarray(z).astype(np.uint64), v[:, 1]), (fmt, mode)
            assert fl == tf_flags(int(np.bitwise_or.reduce(v[:, 2])))


def test_scalars_and_kinds():
    assert fpkit.add(0x3C00, 0x3C00, "fp16") == 0x4000
    assert fpkit.add(0x3C00, 0x3C00, fmt="fp16", flags=True) == (0x4000, 0)
    assert fpkit.div(0x3C00, 0, "fp16", flags=True) == (0x7C00, fpkit.Flags.DIVBYZERO)
    assert fpkit.div(0x38, 0, "e4m3") == 0x7F  # no infinity: the NaN
    assert fpkit.classify(0x7F, "e4m3") == fpkit.Class.QNAN
    assert fpkit.neg(0x38, "e4m3") == 0xB8 and fpkit.abs(0xB8, "e4m3") == 0x38
    assert fpkit.copysign(0x38, 0x80, "e4m3") == 0xB8
    assert fpkit.next_up(0x7E, "e4m3") == 0x7F
    assert fpkit.to_int64(0x3E00, "fp16") == 2  # 1.5, ties to even
    assert fpkit.from_int64(3, "e2m1") == 0x5
    assert fpkit.signbit(0x8000, "fp16") is True
    # arrays of a format's dtype carry their format, broadcast, and come back so
    x = fpkit.encode(np.float32([1, 2, 3]), "e5m2")
    y = fpkit.mul(x, fpkit.encode(np.float32(2), "e5m2"))
    assert fpkit.decode(y).tolist() == [2, 4, 6] and y.dtype == x.dtype
    assert fpkit.add(np.uint16([0x3C00, 0x4000]), 0x3C00, "fp16").tolist() == [0x4000, 0x4200]
    a = np.float32([1, 2, 3])
    assert fpkit.add(a, a, round="rtz").tolist() == [2, 4, 6]  # fp32 arithmetic on float32
    # minimum and maximum, NaN handling
    nan = 0x7E00
    assert fpkit.minimum(nan, 0x3C00, "fp16") == nan
    assert fpkit.minimum_number(nan, 0x3C00, "fp16") == 0x3C00
    assert fpkit.maximum(0x8000, 0x0000, "fp16") == 0x0000
    # SR: element i rounds with counter + i
    a = np.full(1000, 0x3C00, np.uint16)
    b = np.full(1000, 0x1000, np.uint16)  # half an ulp of 1: either way, half the time
    z = fpkit.add(a, b, "fp16", "sr", seed=3)
    assert 0 < int((z == 0x3C01).sum()) < 1000
    z2 = fpkit.add(a[500:], b[500:], "fp16", "sr", seed=3, counter=500)
    assert np.array_equal(z[500:], z2)


def test_operand_errors():
    with pytest.raises(TypeError, match="name the format"):
        fpkit.add(1, 2)
    with pytest.raises(ValueError, match="lie in 0"):
        fpkit.add(0x10000, 1, "fp16")
    with pytest.raises(ValueError, match="lie in 0"):
        fpkit.add(-1, 1, "fp16")
    with pytest.raises(TypeError, match="holds fp32 encodings, not fp16"):
        fpkit.add(np.float32([1]), 1, "fp16")
    with pytest.raises(TypeError):
        fpkit.add(1.5, 1, "fp16")
    with pytest.raises(ValueError, match="broadcast"):
        fpkit.add(np.zeros(3, np.uint16), np.zeros(4, np.uint16), "fp16")
    with pytest.raises(TypeError, match="takes 2 operands"):
        fpkit.add(1, fmt="fp16")
