"""Formats: fpkit's descriptors, what fpinspect --info says about a format
(its fields and the thresholds where values vanish or overflow), and what
fpinspect says about one value, as dicts of the same keys as its --json
output.  Everything is asked of the library: the thresholds are found by
probing its rounding, as fpinspect finds them."""

import decimal
import enum
import math

import numpy as np

from . import _fpkit, _text
from ._context import Flags, ctx

_FLAG_NAMES = ("invalid", "divbyzero", "overflow", "underflow", "inexact")
_RULE = {
    "ieee": "IEEE",
    "fn": "FN (no infinity; only S.1..1.1..1 is NaN)",
    "fnuz": "FNUZ (no infinity, no -0; only 1.0..0.0..0 is NaN)",
    "none": "NONE (no infinity, no NaN: overflow saturates; an invalid result is -0)",
    "e8m0": "E8M0 (unsigned powers of two, no zero; only 1..1 is NaN)",
}


class Class(enum.IntEnum):
    """What an encoding is (fpk_class)."""

    ZERO = 0
    SUBNORMAL = 1
    NORMAL = 2
    INF = 3
    QNAN = 4
    SNAN = 5


_CLASS_TEXT = ("zero", "subnormal", "normal", "inf", "quiet NaN", "signaling NaN")


def formats():
    """The names of the built-in formats, in the order of fpk_formats[]."""
    return _fpkit.builtin_formats()


def format(name):
    """The format NAME (a name or an alias, case-insensitive, or eXmY,
    eXmYfn, eXmYfnuz) as a Format."""
    return Format(name)


def _op1(name, fmt, bits, c=None):
    """Operation NAME of one encoding: (result, flags)."""
    size = _fpkit.descriptor(fmt)["size"]
    x = np.array([bits], {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
    arity, out, _ = _fpkit.op_names()[name]
    z = np.zeros(1, x.dtype if out == 0 else {1: np.uint8, 8: np.int64}[out])
    fl, _ = _fpkit.op(name, fmt, (x,) * arity, z, c or ctx())
    return int(z[0]), fl


def _convert1(to, frm, bits, c):
    sz = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    x = np.array([bits], sz[_fpkit.descriptor(frm)["size"]])
    z = np.zeros(1, sz[_fpkit.descriptor(to)["size"]])
    fl, _ = _fpkit.convert(to, frm, x, z, c, 1)
    return int(z[0]), fl


class Format:
    """A format: the fields of its descriptor (struct fpk_format) as
    attributes, its extreme values, and the thresholds of round-to-nearest
    (see info() for other modes).

    name, aliases, exp_bits, man_bits, bias, special ("ieee", "fn",
    "fnuz", "none", "e8m0"), width, emin, emax, sign_mask, exp_mask,
    man_mask, max_finite, inf, nan (encodings, right-aligned ints), size
    (bytes an encoding takes in an array); max, min_normal, min_subnormal
    (floats; min_subnormal None where there are none), epsilon."""

    def __init__(self, name):
        d = _fpkit.descriptor(name)
        self.__dict__.update(d)
        self.max = _fpkit.to_double(self.name, self.max_finite)
        has_normal = self.max_finite >> self.man_bits != 0 or self.special == "e8m0"
        self.min_normal = math.ldexp(1.0, self.emin) if has_normal else None
        subnormals = self.man_bits > 0 and self.special != "e8m0" and self.max_finite >= 1
        self.min_subnormal = math.ldexp(1.0, self.emin - self.man_bits) if subnormals else None
        self.epsilon = math.ldexp(1.0, -self.man_bits)

    def __repr__(self):
        return f"fpkit.format({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Format) and other.name == self.name and (
            other.exp_bits, other.man_bits, other.bias, other.special) == (
            self.exp_bits, self.man_bits, self.bias, self.special)

    def __hash__(self):
        return hash(self.name)

    @property
    def thresholds(self):
        """Where values become zero and where they overflow, under
        round-to-nearest-even: info()'s "to_zero" and "overflow"."""
        i = self.info()
        return {"to_zero": i["to_zero"], "overflow": i["overflow"]}

    def info(self, round="rne", *, ftz=False, saturate=False):
        """What fpinspect --info --json prints for the format under ROUND
        (a deterministic mode), FTZ and SATURATE: a dict with the same keys
        and values."""
        if round == "sr":
            raise ValueError("info shows deterministic roundings only")
        c = ctx(round, ftz=ftz, saturate=saturate)
        name, m = self.name, self.man_bits
        minn = 0 if self.special == "e8m0" else 1 << m
        subnormals = m > 0 and self.special != "e8m0"
        signed = self.sign_mask != 0
        none = "no negative numbers"
        hexs = lambda a: _hex(self, a)  # noqa: E731
        return {
            "format": name,
            "aliases": self.aliases,
            "width": self.width,
            "exp_bits": self.exp_bits,
            "man_bits": m,
            "bias": self.bias,
            "special": _RULE[self.special],
            "max_finite": {"bits": hexs(self.max_finite),
                           "value": _fpkit.format_exact(name, self.max_finite)},
            "min_normal": {"bits": hexs(minn), "value": _fpkit.format_exact(name, minn)},
            "min_subnormal": {"bits": hexs(1) if subnormals else "none",
                              "value": _fpkit.format_exact(name, 1) if subnormals else "none"},
            "nan": hexs(self.nan),
            "inf": hexs(self.inf) if self.inf else "none",
            "epsilon": {"value": _text.pow2(-m), "log2": -m},
            "unit_roundoff": {"value": _text.pow2(-m - 1), "log2": -m - 1},
            "decimal_digits": (m + 1) * math.log10(2.0),
            "normal_binades": self.emax - self.emin + 1,
            "subnormal_binades": m,
            "round": c[0],
            "to_zero": {"positive": self._zero_threshold(c, False),
                        "negative": self._zero_threshold(c, True) if signed else none},
            "overflow": {"positive": self._overflow_threshold(c, False),
                         "negative": self._overflow_threshold(c, True) if signed else none},
        }

    def _probe(self, c, neg, m, e):
        """The library's result and flags for (-1)^NEG * M * 2^E."""
        bits, fl = _fpkit.parse(self.name, f"{'-' if neg else ''}0x{m:x}p{e}", c)
        return bits, fl

    def _to_zero(self, c, neg, m, e):
        z, fl = self._probe(c, neg, m, e)
        return _op1("classify", self.name, z)[0] == Class.ZERO and not fl & Flags.OVERFLOW

    def _zero_threshold(self, c, neg):
        g = 8  # probes 2^-8 of a subnormal ulp off the boundaries
        unit = self.emin - self.man_bits - 1 - g
        b = 1 << ((self.man_bits if c[1] else 0) + 1 + g)
        h = b - (1 << g)
        x = "-x" if neg else "x"
        if self._to_zero(c, neg, b - 1, unit):
            return f"0 < {x} < {_scaled_text(b, unit)}"
        if self._to_zero(c, neg, h, unit):
            return f"0 < {x} <= {_scaled_text(h, unit)}"
        if self._to_zero(c, neg, h - 1, unit):
            return f"0 < {x} < {_scaled_text(h, unit)}"
        if self.max_finite == 0:
            return f"never (every {x} > 0 overflows)"
        return f"never ({x} > 0 keeps a nonzero result)"

    def _overflow_threshold(self, c, neg):
        mag = self.max_finite
        normal = mag >> self.man_bits != 0
        msig = (mag & self.man_mask) | 1 << self.man_bits if normal else mag << 1
        unit = (self.emax if normal else self.emin - 1) - self.man_bits - 2
        x = "-x" if neg else "x"
        rel = (">", ">=", ">", ">=")
        for i in range(4):
            r, fl = self._probe(c, neg, msig * 4 + i + 1, unit)
            if not fl & Flags.OVERFLOW and i < 3:
                continue
            k = _op1("classify", self.name, r)[0]
            what = ("goes to inf" if k == Class.INF else "becomes NaN" if k > Class.INF
                    else "gives max finite, overflow raised")
            at = msig * 4 + (0 if i == 0 else 4 if i == 3 else 2)
            return f"{x} {rel[i]} {_scaled_text(at, unit)} {what}"
        return None


def _hex(f, a):
    return f"0x{a:0{(f.width + 3) // 4}x}"


def _scaled_text(units, e):
    """UNITS * 2^E for a threshold, as fpinspect writes it."""
    d = _text.exact(units, e)
    pow2 = units != 0 and units & (units - 1) == 0
    top = units.bit_length() - 1 + e  # floor(log2)
    if len(d) <= 28:
        return f"2^{top} = {d}" if pow2 else d
    approx = _text.g6(_text.dyadic(units, e))
    if pow2:
        return f"2^{top} ~ {approx}"
    tz = (units & -units).bit_length() - 1
    return f"{units >> tz} * 2^{e + tz} ~ {approx}"


def _bin(v, n):
    return format_bits(v, n)


def format_bits(v, n):
    return "".join("1" if v >> (n - 1 - i) & 1 else "0" for i in range(n))


def _flag_list(fl):
    return [n for i, n in enumerate(_FLAG_NAMES) if fl & 1 << i]


def _num(v):
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf")


def _pattern(s, f):
    """A bit pattern (0x..., 0b..., underscores allowed) of S, or None if S
    is not one; fpkit.Error for a malformed or too wide pattern (as
    fpinspect reports them)."""
    low = s[:2].lower()
    base = 16 if low == "0x" else 2 if low == "0b" else 0
    if not base or (base == 16 and any(ch in s for ch in ".pP")):
        return None
    digits = s[2:].replace("_", "")
    for i, ch in enumerate(s[2:], 2):
        if ch != "_" and ch.lower() not in "0123456789abcdef"[:base]:
            raise _fpkit.Error(f'bit pattern "{s}": \'{ch}\' at offset {i} is not a '
                               f"{'hexadecimal' if base == 16 else 'binary'} digit")
    if not digits:
        raise _fpkit.Error(f'bit pattern "{s}" has no digits')
    v = int(digits, base)
    if v >> 64:
        raise _fpkit.Error(f'bit pattern "{s}" is wider than 64 bits')
    if f.name == "tf32" and v >> f.width and not v >> 32:
        if v & 0x1FFF:
            raise _fpkit.Error(f'bit pattern "{s}": a tf32 32-bit container must have its low '
                               "13 bits zero")
        v >>= 13
    if f.width < 64 and v >> f.width:
        raise _fpkit.Error(f'bit pattern "{s}" is wider than {f.name}\'s {f.width} bits')
    return v


def _value(f, a):
    """The exact value of encoding A of F as a Decimal (NaN and infinities
    included)."""
    return _text.CONTEXT.create_decimal(_fpkit.to_double(f.name, a))


def _decimal_of_text(s):
    """The number S denotes, as a Decimal at the precision of fpinspect's
    reference (exact for every encoding's value)."""
    t = s.strip().lower()
    sign = -1 if t.startswith("-") else 1
    body = t[1:] if t[:1] in "+-" else t
    if body in ("inf", "infinity"):
        return decimal.Decimal(sign) * decimal.Decimal("inf")
    if body == "nan":
        return decimal.Decimal("nan")
    if body.startswith("0x"):
        mant, _, exp = body[2:].partition("p")
        whole, _, frac = mant.partition(".")
        m = int((whole + frac) or "0", 16)
        e = (int(exp) if exp else 0) - 4 * len(frac)
        v = _text.dyadic(m, e) if abs(e) < 10**7 else _text.CONTEXT.multiply(
            m, _text.CONTEXT.power(decimal.Decimal(2), e))
        return v.copy_negate() if sign < 0 else v
    if "^" in body:  # 2^E or K*2^E
        k, _, p = body.rpartition("*")
        e = int(p.partition("^")[2])
        m = _text.CONTEXT.create_decimal(k) if k else decimal.Decimal(1)
        v = _text.CONTEXT.multiply(m, _text.dyadic(1, e))
        return v.copy_negate() if sign < 0 else v
    return _text.CONTEXT.create_decimal(t)


def _rel_error(x, z):
    if x.is_nan() and z.is_nan():
        return 0.0
    if not x.is_finite() or not z.is_finite():
        return 0.0 if x == z else math.inf
    if x == 0:
        return 0.0 if z == 0 else math.inf
    return float(abs(_text.CONTEXT.divide(_text.CONTEXT.subtract(z, x), x)))


def _direction(x, z):
    if x.is_nan() or z.is_nan():
        return 0
    return (z > x) - (z < x)


def inspect(value, fmt="fp32", round="rne", *, ftz=False, saturate=False, to=()):
    """What fpinspect --json prints for VALUE in FMT: a dict with its keys.

    VALUE is an encoding (an int, or a str bit pattern "0x3c00",
    "0b0011110000000000") or a number (a str decimal or hexadecimal float,
    "inf", "nan", or a Python float, read exactly), rounded into FMT under
    ROUND, FTZ and SATURATE.  TO lists further formats (fpinspect --to): a
    number is rounded into each once, from its exact value; an encoding is
    converted from its value in FMT.  rel_error is the exact relative error rounded to a
    double (fpinspect's may differ in its last bit)."""
    f = Format(fmt)
    if round == "sr":
        raise ValueError("inspect shows deterministic roundings only")
    c = ctx(round, ftz=ftz, saturate=saturate)
    rounding = None
    if isinstance(value, bool):
        raise TypeError("a value is an int encoding, a str or a float")
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value < 0 or (f.width < 64 and value >> f.width):
            raise _fpkit.Error(f"0x{value:x} is wider than {f.name}'s {f.width} bits")
        a, arg = value, _hex(f, value)
    else:
        if isinstance(value, (float, np.floating)):
            arg, text = repr(float(value)), float(value).hex()
            text = "nan" if math.isnan(value) else text
        elif isinstance(value, str):
            arg = text = value
        else:
            raise TypeError("a value is an int encoding, a str or a float")
        if not text:
            raise _fpkit.Error("empty value: give a bit pattern, a decimal, a hex float, inf or nan")
        a = _pattern(text, f) if isinstance(value, str) else None
        if a is None:
            a, fl = _fpkit.parse(f.name, text, c)
            x, z = _decimal_of_text(text), _value(f, a)
            d = _text.CONTEXT.subtract(z, x) if x.is_finite() and z.is_finite() else (
                decimal.Decimal("nan") if x.is_nan() or z.is_nan() or x == z else
                _text.CONTEXT.subtract(z, x))
            dirn = _direction(x, z)
            how = ("NaN" if z.is_nan() and not x.is_nan() else
                   "no NaN in the format" if x.is_nan() and not z.is_nan() else
                   "up" if dirn > 0 else "down" if dirn < 0 else "exact")
            rounding = {"mode": c[0], "direction": how, "error": _text.g6(d),
                        "rel_error": _num(_rel_error(x, z)), "flags": _flag_list(fl)}
    out = _describe(f, a)
    out["input"] = arg
    if rounding is not None:
        out["rounding"] = rounding
    if rounding is None:  # an encoding: converted from it
        out["to"] = [_conversion(_value(f, a), Format(t), *_convert1(Format(t).name, f.name, a, c),
                                 "encoding") for t in to]
    else:  # a number: rounded once from its exact value into each format
        out["to"] = [_conversion(x, Format(t), *_fpkit.parse(Format(t).name, text, c), "input")
                     for t in to]
    return out


def _describe(f, a):
    k = Class(_op1("classify", f.name, a)[0])
    sign = _op1("signbit", f.name, a)[0]
    ef, man = (a & f.exp_mask) >> f.man_bits, a & f.man_mask
    sbits = _bin(sign, 1 if f.sign_mask else 0)
    ebits, mbits = _bin(ef, f.exp_bits), _bin(man, f.man_bits)
    finite = k <= Class.NORMAL
    unbiased = f.emin if ef == 0 else ef - f.bias
    ulp_exp = unbiased - f.man_bits
    sig = (1 << f.man_bits if k == Class.NORMAL else 0) | man
    below = _op1("next_down", f.name, a)[0]
    above = _op1("next_up", f.name, a)[0]
    d = {
        "format": f.name,
        "bits": _hex(f, a),
        "width": f.width,
        "fields": {"sign": sbits, "exponent": ebits, "mantissa": mbits},
        "sign": sign,
        "exponent": {"biased": ef, "unbiased": unbiased, "bias": f.bias},
        "class": _CLASS_TEXT[k],
        "value": _fpkit.format_exact(f.name, a),
        "shortest": _fpkit.format_shortest(f.name, a),
    }
    if finite:
        d["significand"] = f"{'1' if k == Class.NORMAL else '0'}.{mbits}"
        d["m"] = sig
        d["e"] = ulp_exp
        d["ulp"] = {"log2": ulp_exp, "value": _text.pow2(ulp_exp)}
    d["below"] = {"bits": _hex(f, below), "value": _fpkit.format_exact(f.name, below)}
    d["above"] = {"bits": _hex(f, above), "value": _fpkit.format_exact(f.name, above)}
    return d


def _conversion(x, t, b, fl, source):
    """The row of fpinspect --to for the result B (flags FL) in T of the
    exact value X, taken FROM the input number or its encoding."""
    z = _value(t, b)
    k = _op1("classify", t.name, b)[0]
    underflow = x.is_finite() and x != 0 and k == Class.ZERO
    subnormal = k == Class.SUBNORMAL
    overflow = bool(fl & Flags.OVERFLOW)
    dirn = _direction(x, z)
    note = ("NaN" if x.is_nan() and z.is_nan() else
            "NaN, which the format lacks" if x.is_nan() else
            ("overflowed to NaN" if overflow else "became NaN") if z.is_nan() else
            "overflowed to inf" if overflow and z.is_infinite() else
            "overflowed, held at max finite" if overflow else
            "underflowed to zero" if underflow else
            "subnormal, rounded" if subnormal and dirn else
            "subnormal, exact" if subnormal else
            "rounded up" if dirn > 0 else "rounded down" if dirn < 0 else "exact")
    return {"format": t.name, "bits": _hex(t, b), "value": _fpkit.format_exact(t.name, b),
            "rel_error": _num(_rel_error(x, z)), "flags": _flag_list(fl),
            "underflow": underflow, "subnormal": subnormal, "overflow": overflow, "note": note,
            "from": source}
