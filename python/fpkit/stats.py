"""Tensor statistics: what each format does to a tensor, as fpgrad(1)
reports it for one tensor (its --json "tensors" entries), computed by the
library (fpk_stats_add_array, fpk_stats_add_sqerr) with the SQNR's error
sums kept exactly, so that fpkit.stats(x) gives fpgrad's numbers for the
same tensor bit for bit and Stats add up like fpgrad's total."""

import json
import math

import numpy as np

from . import _dtypes, _fpkit
from ._context import ctx, threads as _threads

DEFAULT_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")
_DTYPE_NAMES = {"fp64": "f64", "fp32": "f32", "fp16": "f16", "bf16": "bf16", "e4m3": "e4m3",
                "e5m2": "e5m2"}


def stats(x, formats=DEFAULT_FORMATS, scale=1, round="rne", *, ftz=False, saturate=False,
          sqnr=True, name=None, threads=None):
    """The statistics of tensor X in FORMATS (up to 16 names) at scale
    SCALE (elements rounded as x * SCALE, a loss scale) under ROUND, FTZ
    and SATURATE: a Stats.

    X is a NumPy array, a torch tensor (on the CPU) or anything with
    __dlpack__, of float64, float32, float16, bfloat16, float8_e4m3fn or
    float8_e5m2 (ml_dtypes' other formats are widened to float32
    exactly).  Its elements are taken in C order, or in storage order for
    a Fortran-ordered array (as fpgrad reads a Fortran-ordered .npy), and
    under SR element k rounds with counter k.  SQNR=False skips the error
    sums (fpgrad --no-sqnr).  NAME labels the result.  THREADS caps the
    threads of the statistics pass (the SQNR's pass runs on the calling
    thread, as fpk_stats_add_sqerr does)."""
    inp = _dtypes.array_in(x)
    _dtypes.values_in(inp, "stats")  # (refuses what is not a float dtype)
    arr, src = inp.array, inp.fmt
    if isinstance(formats, str):
        formats = (formats,)
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise TypeError(f"scale must be a number, not {scale!r}") from None
    core = _fpkit.StatsCore(tuple(formats), scale, ctx(round, ftz=ftz, saturate=saturate),
                            bool(sqnr))
    shape = arr.shape
    if arr.ndim > 1 and arr.flags.f_contiguous and not arr.flags.c_contiguous:
        flat, rowlen = arr.T, shape[0]  # storage order, rows along the first dimension
    else:
        flat, rowlen = np.ascontiguousarray(arr), shape[-1] if arr.ndim else 1
    if src not in _DTYPE_NAMES:  # ml_dtypes' others: their values, exactly
        from .arrays import decode

        flat = decode(flat)
        src = "fp32" if flat.dtype == np.float32 else "fp64"
    flat = flat.view(_dtypes.code_dtype(src))
    core.add(flat.reshape(-1), src, max(int(rowlen), 1), _threads(threads))
    return Stats(core, name=name, dtype=_DTYPE_NAMES.get(src), shape=tuple(int(n) for n in shape))


def _sum_value(s):
    """An exact sum S of S * 2^-1074 rounded to the nearest double."""
    if s is None:
        return math.inf
    try:
        return s / (1 << 1074)
    except OverflowError:
        return math.inf


def _sum_terms(s):
    """Doubles whose exact sum is S * 2^-1074: the nearest first, then the
    nearest to what is left (of either sign), until nothing is (JSON keeps
    doubles exactly)."""
    if s is None:
        return None
    if s >= 1 << 2098:  # beyond the largest double: kept as infinite
        return None
    out = []
    while s:
        v = _sum_value(s)
        m, e = v.as_integer_ratio()
        out.append(v)
        s -= m * (1 << 1074) // e
    return out


def _terms_sum(terms, key):
    if terms is None:
        return None
    if not isinstance(terms, list):
        raise _fpkit.Error(f"stats JSON: \"sqnr_sums\" {key}: a list of numbers, or null")
    s = 0
    for t in terms:
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
            raise _fpkit.Error(f"stats JSON: \"sqnr_sums\" {key}: {t!r} is not a finite number")
        m, e = float(t).as_integer_ratio()
        s += m * (1 << 1074) // e
    if s < 0 or s >> 2300:
        raise _fpkit.Error(f"stats JSON: \"sqnr_sums\" {key}: not a sum of squares")
    return s


class FormatStats:
    """What one format does to the elements: underflow (nonzero finite
    elements rounded to zero), subnormal (rounded to nonzero subnormals),
    overflow (beyond max finite: to inf or NaN, or held at max), their
    fractions of the nonzero finite elements (*_frac) and of all elements
    (*_frac_all), and the SQNR in dB (None without error, signal or sums)."""

    def __init__(self, name, counts, nonzero, count, sums):
        self.name = name
        self.underflow, self.subnormal, self.overflow = counts
        self.x2 = self.e2 = None
        if sums is not None:
            self.x2, self.e2 = _sum_value(sums[0]), _sum_value(sums[1])
        self._sums = sums
        for k in ("underflow", "subnormal", "overflow"):
            n = getattr(self, k)
            setattr(self, k + "_frac", n / nonzero if nonzero else None)
            setattr(self, k + "_frac_all", n / count if count else None)

    @property
    def sqnr_db(self):
        if self._sums is None or self.x2 == 0 or self.e2 == 0:
            return None
        db = 10 * math.log10(self.x2 / self.e2)
        return db if math.isfinite(db) else None

    def to_dict(self):
        d = {}
        for k in ("underflow", "subnormal", "overflow"):
            d[k] = getattr(self, k)
        for k in ("underflow", "subnormal", "overflow"):
            d[k + "_frac"] = getattr(self, k + "_frac")
        for k in ("underflow", "subnormal", "overflow"):
            d[k + "_frac_all"] = getattr(self, k + "_frac_all")
        if self._sums is not None:
            d["sqnr_db"] = self.sqnr_db
        return d

    def __repr__(self):
        return f"<fpkit.FormatStats {self.name}: {self.to_dict()}>"


class Stats:
    """The statistics of a tensor, or of several merged with +.

    Attributes (fpgrad's names): formats, scale, round, ftz, saturate,
    count, zeros, nonfinite, nonzero_finite, amax, log2_min, log2_max,
    log2_median (None when nothing is nonzero and finite), log2_hist
    ({"min": floor(log2|x|) of the first bin, "counts": [...]}), and
    fmt[name], a FormatStats per format; name, dtype and shape of the
    tensor (None after merging different ones).

    s.to_dict() and s.to_json() give fpgrad's JSON fields of one tensor,
    with "round", "ftz" and "saturate" (which make it the library's
    statistics JSON too, fpk_stats_from_json) and "sqnr_sums", the exact
    error sums, so that Stats.from_json(s.to_json()) merges as s does.
    Stats.from_json also reads a tensor of an fpgrad report."""

    def __init__(self, core, name=None, dtype=None, shape=None):
        self._core = core
        self.name, self.dtype, self.shape = name, dtype, shape
        f = core.fields()
        self._fields = f
        for k in ("formats", "scale", "round", "ftz", "saturate", "count", "zeros", "nonfinite",
                  "amax"):
            setattr(self, k, f[k])
        self.nonzero_finite = self.count - self.zeros - self.nonfinite
        hist = list(f["hist"])
        self.log2_hist = {"min": f["hist_min"], "counts": hist}
        any_ = bool(hist)
        self.log2_min = f["hist_min"] if any_ else None
        self.log2_max = f["hist_min"] + len(hist) - 1 if any_ else None
        self.log2_median = None
        n = sum(hist)
        if n:
            want, seen = n // 2 + n % 2, 0
            for i, c in enumerate(hist):
                seen += c
                if seen >= want:
                    self.log2_median = f["hist_min"] + i
                    break
        sums = f["sums"]
        self.fmt = {name: FormatStats(name, f["counts"][j], self.nonzero_finite, self.count,
                                      None if sums is None else sums[j])
                    for j, name in enumerate(self.formats)}

    def __add__(self, other):
        if not isinstance(other, Stats):
            return NotImplemented
        core = self._core.copy()
        core.merge(other._core)
        same = lambda a, b: a if a == b else None  # noqa: E731
        return Stats(core, name=same(self.name, other.name), dtype=same(self.dtype, other.dtype),
                     shape=same(self.shape, other.shape))

    def __radd__(self, other):
        if other == 0:  # sum(list of Stats)
            return self
        return NotImplemented

    def to_dict(self):
        """fpgrad's fields of one tensor (name, dtype and shape when
        known), then the options and the exact sums."""
        d = {}
        if self.name is not None:
            d["name"] = self.name
        if self.dtype is not None:
            d["dtype"] = self.dtype
        if self.shape is not None:
            d["shape"] = list(self.shape)
        d.update(scale=self.scale, count=self.count, zeros=self.zeros, nonfinite=self.nonfinite,
                 nonzero_finite=self.nonzero_finite, amax=self.amax, log2_min=self.log2_min,
                 log2_max=self.log2_max, log2_median=self.log2_median,
                 log2_hist={"min": self.log2_hist["min"], "counts": list(self.log2_hist["counts"])},
                 formats={n: f.to_dict() for n, f in self.fmt.items()})
        d.update(round=self.round, ftz=self.ftz, saturate=self.saturate)
        if self._fields["sums"] is not None:
            d["sqnr_sums"] = {n: {"x2": _sum_terms(s[0]), "e2": _sum_terms(s[1])}
                              for n, s in zip(self.formats, self._fields["sums"])}
        return d

    def to_json(self):
        return json.dumps(self.to_dict(), allow_nan=False)

    @classmethod
    def from_json(cls, text, *, round="rne", ftz=False, saturate=False):
        """Statistics from JSON that to_json wrote, from the library's
        statistics JSON (fpk_stats_to_json) or from one tensor of an fpgrad
        --json report (ROUND, FTZ and SATURATE stand in for the options it
        does not repeat: the report's "round").  fpkit.Error with the
        library's message for JSON it refuses."""
        try:
            d = json.loads(text)
        except ValueError as e:
            raise _fpkit.Error(f"stats JSON: {e}") from None
        if not isinstance(d, dict):
            raise _fpkit.Error("stats JSON: not an object")
        lib = dict(d)
        lib.setdefault("round", round)
        lib.setdefault("ftz", ftz)
        lib.setdefault("saturate", saturate)
        core = _fpkit.StatsCore.from_json(json.dumps(lib))
        sums = d.get("sqnr_sums")
        fmts = core.fields()["formats"]
        if sums is not None:
            if not isinstance(sums, dict) or set(sums) != set(fmts):
                raise _fpkit.Error("stats JSON: \"sqnr_sums\" must name every format")
            core.set_sums(tuple((_terms_sum(sums[n]["x2"], "x2"), _terms_sum(sums[n]["e2"], "e2"))
                                for n in fmts))
        shape = d.get("shape")
        return cls(core, name=d.get("name"), dtype=d.get("dtype"),
                   shape=tuple(shape) if isinstance(shape, list) else None)

    def __repr__(self):
        what = f" {self.name}" if self.name else ""
        counts = ", ".join(f"{n}: {f.underflow}/{f.subnormal}/{f.overflow}" for n, f in self.fmt.items())
        return (f"<fpkit.Stats{what}: {self.count} elements, amax {self.amax:g}; "
                f"underflow/subnormal/overflow {counts}>")
