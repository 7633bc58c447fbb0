"""Exact decimal text of dyadic values, in the style of fpkit's tools:
plain notation for decimal exponents -5 to 15, scientific otherwise, every
digit; and C's %.6g of an exact value (rounded to nearest, ties to
even)."""

import decimal

# Enough digits for any value fpinspect measures (4096 bits), and an
# exponent range as wide as decimal allows.
CONTEXT = decimal.Context(prec=1300, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                          rounding=decimal.ROUND_HALF_EVEN)


def _layout(sign, digits, xe):
    """SIGN, the significant DIGITS (no trailing zeros) and the decimal
    exponent XE of the first: the tools' text."""
    nd = len(digits)
    if xe >= 16 or xe < -5:
        return f"{sign}{digits[0]}{'.' if nd > 1 else ''}{digits[1:]}e{xe:+03d}"
    if xe < 0:
        return f"{sign}0.{'0' * (-xe - 1)}{digits}"
    if nd <= xe + 1:
        return f"{sign}{digits}{'0' * (xe + 1 - nd)}"
    return f"{sign}{digits[:xe + 1]}.{digits[xe + 1:]}"


def exact(m, e, negative=False):
    """Every digit of (-1)^NEGATIVE * M * 2^E, M >= 0 an integer."""
    if m == 0:
        return "-0" if negative else "0"
    if e >= 0:
        n, scale = m << e, 0
    else:
        n, scale = m * 5**-e, -e  # M * 2^E = M * 5^-E * 10^E
    digits = str(n)
    stripped = digits.rstrip("0")
    return _layout("-" if negative else "", stripped, len(digits) - 1 - scale)


def pow2(e):
    """Every digit of 2^E."""
    return exact(1, e)


def g6(v):
    """C's %.6g of the decimal.Decimal V, rounded to nearest even."""
    if v.is_nan():
        return "nan"
    if v.is_infinite():
        return "-inf" if v < 0 else "inf"
    if v == 0:
        return "-0" if v.is_signed() else "0"
    r = CONTEXT.create_decimal(v).normalize(decimal.Context(prec=6, rounding=decimal.ROUND_HALF_EVEN,
                                                            Emax=decimal.MAX_EMAX,
                                                            Emin=decimal.MIN_EMIN))
    sign, digits, exp = r.as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    x = len(digits) + exp - 1  # the exponent of the first digit
    s = "-" if sign else ""
    if x < -4 or x >= 6:
        return f"{s}{ds[0]}{'.' if len(ds) > 1 else ''}{ds[1:]}e{x:+03d}"
    if x < 0:
        return f"{s}0.{'0' * (-x - 1)}{ds}"
    if len(ds) <= x + 1:
        return f"{s}{ds}{'0' * (x + 1 - len(ds))}"
    return f"{s}{ds[:x + 1]}.{ds[x + 1:]}"


def dyadic(m, e):
    """M * 2^E as a decimal.Decimal, exactly while it fits CONTEXT."""
    if e >= 0:
        return CONTEXT.create_decimal(m << e)
    return CONTEXT.divide(CONTEXT.create_decimal(m), CONTEXT.power(2, -e))
