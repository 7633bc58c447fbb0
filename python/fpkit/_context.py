"""Rounding modes, options and exception flags, as every call takes them."""

import enum
import os

ROUNDS = ("rne", "rna", "rtz", "rup", "rdn", "rod", "sr")


class Flags(enum.IntFlag):
    """The IEEE 754-2019 exception flags a call raised, ORed over its
    elements (fpkit.h's FPK_INVALID ... FPK_INEXACT)."""

    INVALID = 1
    DIVBYZERO = 2
    OVERFLOW = 4
    UNDERFLOW = 8
    INEXACT = 16


def ctx(round="rne", *, ftz=False, daz=False, saturate=False, seed=0, counter=0, sr_bits=None):
    """The context tuple the extension reads (fpk_ctx): a rounding mode by
    name, the options, and stochastic rounding's seed, counter and random
    bits (None: the library's default, 32)."""
    if not isinstance(round, str) or round.lower() not in ROUNDS:
        raise ValueError(f"unknown rounding mode {round!r}; known: {', '.join(ROUNDS)}")
    for name, v in (("seed", seed), ("counter", counter)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**64:
            raise ValueError(f"{name} must be an integer from 0 to 2^64 - 1, not {v!r}")
    if sr_bits is None:
        sr_bits = 32
    if isinstance(sr_bits, bool) or not isinstance(sr_bits, int) or not 1 <= sr_bits <= 64:
        raise ValueError(f"sr_bits must be an integer from 1 to 64, not {sr_bits!r}")
    return (round.lower(), bool(ftz), bool(daz), bool(saturate), seed, counter, sr_bits)


def threads(n):
    """The most threads a call may use: N, or with None the CPUs this
    process may run on (as fpkit's tools choose)."""
    if n is None:
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1024:
        raise ValueError(f"threads must be an integer from 1 to 1024, not {n!r}")
    return n
