"""Arithmetic on encodings, scalar or elementwise: the operations of
fpkit.h (fpk_add ... fpk_sqrt, comparisons, minimum and maximum, sign
operations, neighbours, integers), each correctly rounded once under the
context given, with the IEEE 754-2019 flags.

Operands are encodings: Python ints, integer arrays, or arrays of a
format's dtype (an ml_dtypes float8_e4m3fn array holds e4m3 encodings, a
float32 array fp32 encodings), broadcast against each other.  FMT may be
left out when an operand's dtype names it.  Results come back as the
operands came: a Python int for Python ints, an ml_dtypes array for
ml_dtypes arrays, integer encodings otherwise.  Under round="sr" element i
(in C order) rounds with counter COUNTER + i."""

import numpy as np

from . import _dtypes, _fpkit
from ._context import Flags, ctx
from .formats import Class

_OPS = _fpkit.op_names()


def _fmt_of(fmt, inputs, name):
    if fmt is not None:
        return _fpkit.descriptor(fmt)["name"]
    for i in inputs:
        if i.fmt is not None:
            return i.fmt
    raise TypeError(f"{name}: name the format of integer encodings")


def _apply(name, fmt, operands, c, flags, int_operand=False):
    inputs = [_dtypes.array_in(x) for x in operands]
    fmt = _fmt_of(fmt, [] if int_operand else inputs, name)
    arity, out_size, _ = _OPS[name]
    if int_operand:
        a = inputs[0].array
        if a.dtype.kind not in "iu" or (a.dtype.kind == "u" and a.size and int(a.max()) >> 63):
            raise TypeError(f"{name}: takes int64 integers, not {a.dtype}")
        arrays = [np.ascontiguousarray(a, dtype=np.int64)]
    else:
        arrays = [_dtypes.as_codes(i, fmt, name) for i in inputs]
    if len(arrays) > 1:
        arrays = [np.ascontiguousarray(b) for b in np.broadcast_arrays(*arrays)]
    shape = arrays[0].shape
    zdtype = {0: _dtypes.code_dtype(fmt), 1: np.dtype(np.uint8), 8: np.dtype(np.int64)}[out_size]
    z = np.empty(shape, zdtype)
    fl, _ = _fpkit.op(name, fmt, tuple(arrays), z, c)
    scalar = all(i.scalar for i in inputs)
    like = next((i for i in inputs if i.torch is not None), None) or next(
        (i for i in inputs if i.fmt is not None), None)
    if out_size == 1:
        z = z.view(np.bool_) if name != "classify" else z
    if scalar:
        v = z[()].item()
        r = Class(v) if name == "classify" else v
    elif out_size == 0 and like is not None:
        r = _dtypes.array_out(z, like, fmt)
    elif like is not None and like.torch is not None:
        r = _dtypes.array_out(z, like)
    else:
        r = z
    return (r, Flags(fl)) if flags else r


def _ctx(round, ftz, daz, saturate, seed, counter, sr_bits):
    return ctx(round, ftz=ftz, daz=daz, saturate=saturate, seed=seed, counter=counter,
               sr_bits=sr_bits)


def _rounding(name, arity, doc):
    def op(*args, fmt=None, round="rne", ftz=False, daz=False, saturate=False, seed=0,
           counter=0, sr_bits=None, flags=False):
        operands, rest = args[:arity], args[arity:]
        if len(operands) < arity or len(rest) > 2:
            raise TypeError(f"{name}() takes {arity} operands, then fmt and round")
        if rest:
            fmt = rest[0]
        if len(rest) > 1:
            round = rest[1]
        return _apply(name, fmt, operands, _ctx(round, ftz, daz, saturate, seed, counter,
                                                 sr_bits), flags)

    op.__name__ = op.__qualname__ = name
    names = ", ".join("abd"[:arity])
    op.__doc__ = (f"{name}({names}, fmt=None, round='rne', *, ftz, daz, saturate, seed, counter, "
                  f"sr_bits, flags=False): {doc}")
    return op


add = _rounding("add", 2, "a + b, rounded once (fpk_add).")
sub = _rounding("sub", 2, "a - b, rounded once (fpk_sub).")
mul = _rounding("mul", 2, "a * b, rounded once (fpk_mul).")
div = _rounding("div", 2, "a / b, rounded once (fpk_div).")
fma = _rounding("fma", 3, "a * b + d with one rounding (fpk_fma).")
sqrt = _rounding("sqrt", 1, "the square root, rounded once (fpk_sqrt).")
minimum = _rounding("minimum", 2, "IEEE 754-2019 minimum: a NaN operand gives NaN (fpk_min).")
maximum = _rounding("maximum", 2, "IEEE 754-2019 maximum (fpk_max).")
minimum_number = _rounding("minimum_number", 2, "minimumNumber: a NaN is ignored (fpk_min).")
maximum_number = _rounding("maximum_number", 2, "maximumNumber (fpk_max).")
next_up = _rounding("next_up", 1, "the least encoding greater than a (fpk_next_up).")
next_down = _rounding("next_down", 1, "the greatest encoding less than a (fpk_next_down).")
eq = _rounding("eq", 2, "a == b, quiet (fpk_eq): bools.")
lt = _rounding("lt", 2, "a < b, quiet (fpk_lt): bools.")
le = _rounding("le", 2, "a <= b, quiet (fpk_le): bools.")
eq_signaling = _rounding("eq_signaling", 2, "a == b, invalid for any NaN: bools.")
lt_signaling = _rounding("lt_signaling", 2, "a < b, invalid for any NaN: bools.")
le_signaling = _rounding("le_signaling", 2, "a <= b, invalid for any NaN: bools.")
to_int64 = _rounding("to_int64", 1, "a rounded to an int64 (fpk_to_int64): int64.")


def neg(a, fmt=None):
    """-a on the bits (fpk_neg): no flags."""
    return _apply("neg", fmt, (a,), ctx(), False)


def abs(a, fmt=None):  # noqa: A001 (fpk_abs)
    """|a| on the bits (fpk_abs): no flags."""
    return _apply("abs", fmt, (a,), ctx(), False)


def copysign(a, b, fmt=None):
    """a with b's sign (fpk_copysign): no flags."""
    return _apply("copysign", fmt, (a, b), ctx(), False)


def classify(a, fmt=None):
    """What each encoding is: fpkit.Class values (uint8 for arrays)."""
    return _apply("classify", fmt, (a,), ctx(), False)


def signbit(a, fmt=None):
    """Whether each encoding's sign bit is set: bools."""
    return _apply("signbit", fmt, (a,), ctx(), False)


def from_int64(i, fmt, round="rne", *, ftz=False, daz=False, saturate=False, seed=0, counter=0,
               sr_bits=None, flags=False):
    """The int64 integers I rounded into FMT (fpk_from_int64): encodings."""
    return _apply("from_int64", fmt, (i,), _ctx(round, ftz, daz, saturate, seed, counter, sr_bits),
                  flags, int_operand=True)
