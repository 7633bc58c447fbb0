"""Bad arguments give exceptions with the library's messages, never a
crash: unknown formats and modes, wrong dtypes, non-contiguous, zero-size
and huge arrays, bad outputs, and a few thousand random calls whose
arguments are drawn from good and bad ones alike."""

import numpy as np
import pytest

import fpkit
from conftest import SEED


def test_messages():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match='unknown format "fp7"; known formats: fp64, fp32'):
        fpkit.quantize(x, "fp7")
    with pytest.raises(ValueError, match="unknown rounding mode"):
        fpkit.quantize(x, "fp16", "nearest")
    with pytest.raises(TypeError, match="unsupported dtype int64"):
        fpkit.quantize(np.arange(4), "fp16")
    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        fpkit.encode(np.ones(3, np.complex64), "fp16")
    with pytest.raises(TypeError, match="unsupported dtype"):
        fpkit.quantize(np.array(["a"]), "fp16")
    with pytest.raises(ValueError, match="sr_bits"):
        fpkit.quantize(x, "fp16", "sr", sr_bits=65)
    with pytest.raises(ValueError, match="seed"):
        fpkit.quantize(x, "fp16", "sr", seed=-1)
    with pytest.raises(ValueError, match="threads"):
        fpkit.quantize(x, "fp16", threads=0)
    with pytest.raises(ValueError, match="out must have shape"):
        fpkit.quantize(x, "fp16", out=np.empty(5, np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        fpkit.quantize(x, "fp16", out=np.empty(8, np.float32)[::2])
    with pytest.raises(TypeError, match="name the format"):
        fpkit.decode(np.uint8([1]))
    y = np.ones(9, np.float32)
    with pytest.raises(ValueError, match="overlaps the input"):
        fpkit.quantize(y[:8], "bf16", out=y[1:])
    with pytest.raises(ValueError, match="overlaps the input"):
        fpkit.encode(y, "fp32", out=y)
    with pytest.raises(fpkit.Error, match='recipe "nope"'):
        fpkit.Recipe("nope")
    assert issubclass(fpkit.Error, ValueError)


def test_odd_arrays():
    # zero-size, of any shape, even a huge one
    for shape in ((0,), (0, 5), (3, 0, 2), (2**40, 0)):
        z = np.zeros(shape, np.float32)
        assert fpkit.quantize(z, "e4m3").shape == shape
        assert fpkit.encode(z, "e4m3").shape == shape
        assert fpkit.stats(z).count == 0
        assert fpkit.add(fpkit.encode(z, "e4m3"), fpkit.encode(z, "e4m3")).shape == shape
    assert fpkit.recipe_quantize(np.zeros((2**40, 0), np.float32), "mxfp8-e4m3").codes.shape == (2**40, 0)
    # a huge broadcast is refused by NumPy's allocation, not a crash
    with pytest.raises(MemoryError):
        fpkit.fma(np.zeros((2**16, 1, 1), np.uint8), np.zeros((1, 2**16, 1), np.uint8),
                  np.zeros((1, 1, 2**16), np.uint8), "e4m3")
    with pytest.raises(MemoryError):
        fpkit.quantize(np.broadcast_to(np.float32(1), (2**42,)), "e4m3")
    # strided, reversed, read-only, misaligned views give what their copies give
    base = np.arange(1, 200, dtype=np.float32) / 7
    ro = base.copy()
    ro.flags.writeable = False
    mis = np.frombuffer(np.arange(1, 202, dtype=np.uint8).tobytes()[1:201], np.float32)
    for v in (base[::-3], base[::2][5:], ro, mis, base.reshape(199, 1).T):
        assert np.array_equal(fpkit.quantize(v, "e5m2"), fpkit.quantize(v.copy(), "e5m2"))
        assert fpkit.stats(v).to_dict()["count"] == v.size
    # arrays in the other byte order are read by value
    be = base.astype(">f4")
    assert np.array_equal(fpkit.quantize(be, "fp16"), fpkit.quantize(base, "fp16"))
    assert fpkit.add(np.array([0x3C00], ">u2"), 0x3C00, "fp16").tolist() == [0x4000]


def test_random_calls():
    """Random arguments, good and bad: only TypeError or ValueError (and
    fpkit.Error, a ValueError) may come out."""
    rng = np.random.default_rng(SEED)
    arrays = [np.ones(3, np.float32), np.zeros((0, 2), np.float16), np.arange(5),
              np.float64([1, np.nan, -np.inf]), np.array([1 + 2j]), np.array([True]),
              np.uint8([0, 255]), np.uint16([0x3C00]), np.array(["x"]), np.float32(2),
              [1.5, 2], 3, 2.5, None, "fp16", np.ones((2, 3, 4), np.float32)[:, ::2],
              np.empty(0, object), np.int64([-1])]
    fmts = ["fp16", "e4m3", "e2m1", "tf32", "e8m0", "fp64", "e11m52", "nope", "", 3, None,
            "e12m3", "e4m3fnuz", "E5M2"]
    rounds = ["rne", "sr", "rod", "bad", 0, None]
    calls = [
        lambda a, f, r: fpkit.quantize(a, f, r),
        lambda a, f, r: fpkit.encode(a, f, r),
        lambda a, f, r: fpkit.decode(a, f),
        lambda a, f, r: fpkit.convert(a, f, "fp16", r),
        lambda a, f, r: fpkit.add(a, a, f, r),
        lambda a, f, r: fpkit.fma(a, a, a, f, r),
        lambda a, f, r: fpkit.classify(a, f),
        lambda a, f, r: fpkit.to_int64(a, f, r),
        lambda a, f, r: fpkit.from_int64(a, f, r),
        lambda a, f, r: fpkit.stats(a, (f,), round=r),
        lambda a, f, r: fpkit.inspect(a, f, r),
        lambda a, f, r: fpkit.format(f).info(r),
        lambda a, f, r: fpkit.recipe_quantize(a, f),
    ]
    ok = refused = 0
    for _ in range(3000):
        call = calls[rng.integers(len(calls))]
        args = (arrays[rng.integers(len(arrays))], fmts[rng.integers(len(fmts))],
                rounds[rng.integers(len(rounds))])
        try:
            call(*args)
            ok += 1
        except (TypeError, ValueError):
            refused += 1
    print(f"3000 random calls: {ok} answered, {refused} refused with TypeError or ValueError")
    assert ok and refused
