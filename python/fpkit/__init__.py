"""fpkit for Python: low-precision floating-point formats emulated
bit-exactly, and what they do to training tensors, for NumPy arrays and
PyTorch tensors.

A thin binding over libfpkit (libfpkit(3)): every result is the C
library's, bits and flags, computed in C with the GIL released.

    import numpy, fpkit
    fpkit.quantize(numpy.float32([1e-8, 3.14159]), "fp16")  # [0, 3.140625]
    fpkit.encode(x, "e4m3", saturate=True)  # ml_dtypes float8_e4m3fn
    s = fpkit.stats(grad)                   # fpgrad's statistics of one tensor
    s.fmt["fp16"].underflow, s.fmt["e4m3"].sqnr_db
    fpkit.add(0x3c00, 0x3c00, "fp16")       # encodings in and out: 0x4000
    fpkit.quantize(w, recipe="nvfp4")       # block-scaled recipes

Formats: formats(), format(name) (a Format: fields, extremes, info()
with fpinspect --info's thresholds), inspect(value, fmt).
Arrays: quantize, encode, decode, convert.
Arithmetic on encodings: add, sub, mul, div, fma, sqrt, minimum,
maximum, minimum_number, maximum_number, eq, lt, le (and _signaling),
neg, abs, copysign, next_up, next_down, classify, signbit, to_int64,
from_int64.
Statistics: stats(x) -> Stats (fpgrad's per-tensor fields; + merges;
to_json/from_json).
Recipes: recipes(), Recipe, recipe_quantize, recipe_stats, RecipeStats,
AmaxHistory.
Errors: fpkit.Error (a ValueError) with the library's messages;
ValueError and TypeError for bad arguments."""

from ._fpkit import Error, isa as _isa, version as _version
from ._context import Flags
from .arrays import convert, decode, encode, quantize
from .formats import Class, Format, format, formats, inspect
from .ops import (abs, add, classify, copysign, div, eq, eq_signaling, fma, from_int64, le,
                  le_signaling, lt, lt_signaling, maximum, maximum_number, minimum,
                  minimum_number, mul, neg, next_down, next_up, signbit, sqrt, sub, to_int64)
from .recipes import (AmaxHistory, Quantized, Recipe, RecipeStats, recipe_quantize, recipe_stats,
                      recipes)
from .stats import FormatStats, Stats, stats

__version__ = _version().removeprefix("fpkit ")


def isa():
    """The vector code the array paths run on this CPU: "avx512", "avx2"
    or "c" (FPK_ISA caps it)."""
    return _isa()


__all__ = [
    "AmaxHistory", "Class", "Error", "Flags", "Format", "FormatStats", "Quantized", "Recipe",
    "RecipeStats", "Stats", "abs", "add", "classify", "convert", "copysign", "decode", "div",
    "encode", "eq", "eq_signaling", "fma", "format", "formats", "from_int64", "inspect", "isa",
    "le", "le_signaling", "lt", "lt_signaling", "maximum", "maximum_number", "minimum",
    "minimum_number", "mul", "neg", "next_down", "next_up", "quantize", "recipe_quantize",
    "recipe_stats", "recipes", "signbit", "sqrt", "stats", "sub", "to_int64",
]
