"""Whole arrays: fake quantisation, encoding, decoding and conversion
between formats, element by element as the scalar functions round
(libfpkit's array functions: fpk_array_quantize, fpk_array_convert).

Element i (in C order) rounds with stochastic-rounding counter
COUNTER + i under round="sr", whatever it holds, so results depend on
the seed alone, not on threads or how an array is split."""

import numpy as np

from . import _dtypes, _fpkit
from ._context import Flags, ctx, threads as _threads


def _fits(fmt, container):
    """Whether every value of FMT is a value of CONTAINER (so FMT's results
    can be stored there exactly)."""
    f, c = _fpkit.descriptor(fmt), _fpkit.descriptor(container)
    if f["name"] == c["name"]:
        return True
    # every finite value: precision, range, the smallest subnormal step
    if f["man_bits"] > c["man_bits"]:
        return False
    if _fpkit.to_double(fmt, f["max_finite"]) > _fpkit.to_double(container, c["max_finite"]):
        return False
    if f["emin"] - f["man_bits"] < c["emin"] - c["man_bits"] or f["emin"] < c["emin"] - c["man_bits"]:
        return False
    if f["inf"] and not c["inf"]:
        return False
    if f["special"] != "none" and c["special"] == "none":  # NaN
        return False
    if f["sign_mask"] and not c["sign_mask"]:
        return False
    if f["special"] not in ("fnuz", "e8m0") and c["special"] == "fnuz":  # -0
        return False
    return c["special"] != "e8m0"


def values_dtype(fmt, like=None):
    """The dtype of FMT's values: LIKE's dtype (a float source format)
    where it holds them, else float32 where it does, else float64."""
    if like is not None and _fits(fmt, like):
        return _dtypes.format_dtype(like), like
    if _fits(fmt, "fp32"):
        return np.dtype(np.float32), "fp32"
    return np.dtype(np.float64), "fp64"


def _check_out(out, shape, dtype, what, src=None, in_place=False):
    """OUT, checked to be an array of SHAPE and DTYPE to write: C-contiguous,
    writable, and apart from SRC, or (IN_PLACE) SRC itself."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what}: out must be a NumPy array")
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(f"{what}: out must have shape {shape} and dtype {dtype}, not "
                         f"{out.shape} and {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{what}: out must be C-contiguous and writable")
    if src is not None and out.size and np.may_share_memory(out, src):
        same = (out.__array_interface__["data"][0] == src.__array_interface__["data"][0]
                and out.dtype.itemsize == src.dtype.itemsize)
        if not (in_place and same):
            raise ValueError(f"{what}: out overlaps the input"
                             + (" (it may be the input itself)" if in_place else ""))
    return out


def _result(z, inp, fl, flags, fmt=None):
    r = _dtypes.array_out(z, inp, fmt)
    return (r, Flags(fl)) if flags else r


def quantize(x, fmt=None, round="rne", *, saturate=False, ftz=False, daz=False, seed=0,
             sr_bits=None, counter=0, recipe=None, history=None, flags=False, out=None,
             threads=None):
    """Fake quantisation: each element of X rounded into FMT and back to a
    value, exactly as fpk_convert rounds it (bits and flags), through the
    library's array paths.

    X is a NumPy array, a torch tensor (on the CPU, read in place) or
    anything with __dlpack__, of float64, float32, float16 or one of
    ml_dtypes' formats.  ROUND is "rne", "rna", "rtz", "rup", "rdn",
    "rod" or "sr"; SATURATE, FTZ and DAZ are fpk_ctx's options; under SR
    element i draws with SEED and counter COUNTER + i, comparing SR_BITS
    random bits (1 to 64, default 32).

    The result has X's dtype where it holds every value of FMT (float32
    into bf16, float64 into anything), else float32, else float64; a torch
    tensor for a torch tensor.  OUT, a C-contiguous array of that dtype
    and X's shape, receives it instead of a new array (it may be X).
    FLAGS=True returns (result, fpkit.Flags).  THREADS caps the threads
    (default: the CPUs this process may use).

    With RECIPE (a preset such as "nvfp4", "mxfp8-e4m3",
    "fp8-blockwise", or a spelled-out recipe, fpkit-recipes(7)) instead of
    FMT, the block-scaled quantisation of fpkit.recipe_quantize, its
    dequantised values returned (float32, or float64 for float64 X)."""
    if recipe is not None:
        if fmt is not None:
            raise TypeError("quantize takes a format or a recipe, not both")
        from .recipes import recipe_quantize

        q = recipe_quantize(x, recipe, history=history, values=True)
        y = q.values
        if q.input_dtype == np.float64:
            y = y.astype(np.float64)
        inp = q.input
        r = _dtypes.array_out(y, inp)
        return (r, Flags(q.flags)) if flags else r
    if fmt is None:
        raise TypeError("quantize needs a format (or recipe=...)")
    c = ctx(round, ftz=ftz, daz=daz, saturate=saturate, seed=seed, counter=counter,
            sr_bits=sr_bits)
    inp = _dtypes.array_in(x)
    a, src = _dtypes.values_in(inp, "quantize")
    zdtype, zfmt = values_dtype(fmt, src)
    if out is not None:
        z = _check_out(out, a.shape, zdtype, "quantize", a, in_place=True)
    else:
        z = np.empty(a.shape, zdtype)
    store = "fp32" if zfmt == "fp32" else "fp64"
    if zfmt == store:
        fl, _ = _fpkit.quantize(fmt, src, a, store, z, c, _threads(threads))
    else:  # X's own 16- or 8-bit dtype: the values, then their encodings
        tmp = np.empty(a.shape, np.float32 if _fits(fmt, "fp32") else np.float64)
        store = "fp32" if tmp.dtype == np.float32 else "fp64"
        fl, _ = _fpkit.quantize(fmt, src, a, store, tmp, c, _threads(threads))
        _fpkit.convert(zfmt, store, tmp, z.view(_dtypes.code_dtype(zfmt)), ctx(), _threads(threads))
    return _result(z, inp, fl, flags, zfmt)


def encode(x, fmt, round="rne", *, saturate=False, ftz=False, daz=False, seed=0, sr_bits=None,
           counter=0, flags=False, out=None, threads=None):
    """X's values rounded into FMT, as encodings (fpk_array_convert): an
    array of ml_dtypes' type for the format where ml_dtypes is installed
    and has it (NumPy's float16/32/64 for fp16, fp32, fp64), else unsigned
    integers of the format's size (uint8 for the formats of at most 8
    bits, uint32 for tf32, ...).  X and the options as for quantize."""
    c = ctx(round, ftz=ftz, daz=daz, saturate=saturate, seed=seed, counter=counter,
            sr_bits=sr_bits)
    inp = _dtypes.array_in(x)
    a, src = _dtypes.values_in(inp, "encode")
    z = _codes_out(out, a.shape, fmt, "encode", a)
    fl, _ = _fpkit.convert(fmt, src, a, z.view(_dtypes.code_dtype(fmt)), c, _threads(threads))
    return _result(z, inp, fl, flags, fmt)


def _codes_out(out, shape, fmt, what, src):
    if out is None:
        return np.empty(shape, _dtypes.format_dtype(fmt))
    if not isinstance(out, np.ndarray) or out.dtype.itemsize != _dtypes.code_dtype(fmt).itemsize:
        raise ValueError(f"{what}: out must be an array of {_dtypes.code_dtype(fmt)} or "
                         f"{_dtypes.format_dtype(fmt)}")
    return _check_out(out, shape, out.dtype, what, src)


def decode(codes, fmt=None, *, out=None, threads=None):
    """The values of FMT's encodings CODES (integers, or an array of a
    format's dtype, whose format FMT may then leave out): float32 where
    float32 holds every value of FMT, else float64.  Exact; no flags."""
    inp = _dtypes.array_in(codes)
    fmt = fmt or inp.fmt
    if fmt is None:
        raise TypeError("decode: name the format of integer encodings")
    a = _dtypes.as_codes(inp, fmt, "decode")
    zdtype, zfmt = values_dtype(fmt)
    z = (_check_out(out, a.shape, zdtype, "decode", a) if out is not None
         else np.empty(a.shape, zdtype))
    _fpkit.convert(zfmt, fmt, a, z, ctx(), _threads(threads))
    return _dtypes.array_out(z, inp)


def convert(codes, to, frm=None, round="rne", *, saturate=False, ftz=False, daz=False, seed=0,
            sr_bits=None, counter=0, flags=False, threads=None):
    """FRM's encodings CODES rounded into TO (fpk_convert element by
    element, fpk_array_convert's paths where they apply): TO's encodings,
    as encode returns them.  FRM may be left out for an array of a
    format's dtype."""
    c = ctx(round, ftz=ftz, daz=daz, saturate=saturate, seed=seed, counter=counter,
            sr_bits=sr_bits)
    inp = _dtypes.array_in(codes)
    frm = frm or inp.fmt
    if frm is None:
        raise TypeError("convert: name the format of integer encodings (frm=...)")
    a = _dtypes.as_codes(inp, frm, "convert")
    z = np.empty(a.shape, _dtypes.format_dtype(to))
    fl, _ = _fpkit.convert(to, frm, a, z.view(_dtypes.code_dtype(to)), c, _threads(threads))
    return _result(z, inp, fl, flags, to)
