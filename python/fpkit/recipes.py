"""Block-scaled quantisation recipes (fpkit-recipes(7)): OCP MX, NVFP4,
DeepSeek-V3's blockwise FP8, FP8 with a per-tensor scale, current or
delayed, computed bit-exactly by fpk_recipe_quantize, with their codes,
scales, values and per-block statistics.

A tensor of shape (d0, ..., dn) is viewed as d0*...*d(n-1) rows of dn
elements (the last dimension), blocks tiling that view as the recipe
says."""

import json
import math

import numpy as np

from . import _dtypes, _fpkit
from ._context import Flags

AmaxHistory = _fpkit.AmaxHistory


def recipes():
    """The preset names, in fpkit-recipes(7)'s order."""
    return _fpkit.recipe_presets()


class Recipe:
    """A recipe's descriptor (fpk_recipe): recipe (its canonical
    spelled-out name), elem, scale (format names), rule, block_rows,
    block_cols (0: the whole dimension), round, sr_bits, seed, margin,
    pow2, history, history_max, rht and the RHT's signs."""

    def __init__(self, name):
        if isinstance(name, Recipe):
            name = name.recipe
        self.__dict__.update(_fpkit.recipe_parse(name))

    def __str__(self):
        return self.recipe

    def __repr__(self):
        return f"fpkit.Recipe({self.recipe!r})"

    def blocks(self, rows, cols):
        """(blocks, block rows, block cols) of the grid over a ROWS x COLS view."""
        return _fpkit.recipe_blocks(self.recipe, rows, cols)


def _view(x):
    """X as float32 rows x cols (exact for every float dtype but float64,
    which is rounded to nearest even first), its Input and dtype."""
    from .arrays import decode, encode

    inp = _dtypes.array_in(x)
    a, src = _dtypes.values_in(inp, "recipe")
    dtype = a.dtype
    if src == "fp64":
        a = encode(a, "fp32")
    elif src != "fp32":
        a = decode(a)
        if a.dtype != np.float32:
            raise TypeError(f"recipe: {src} values are not all float32 values")
    a = np.ascontiguousarray(a, dtype=np.float32)
    cols = a.shape[-1] if a.ndim else 1
    # (an empty view as 0 rows: the library would walk 2^40 empty rows)
    rows = a.size // cols if cols else 0
    return a, rows, cols, inp, dtype


class Quantized:
    """What fpkit.recipe_quantize produced for a tensor: codes (uint8, one
    element encoding each, X's shape), scales (the block grid's scales, of
    the scale format's dtype: ml_dtypes' float8_e8m0fnu or float8_e4m3fn
    where installed, float32, or their encodings), global_scale (the
    tensor's decoding scale: NVFP4's 1/S_enc, else 1.0), values (the
    dequantised float32 values, X's shape, or None), amax (the largest
    finite |x| after the RHT, what a delayed history records next), flags
    (fpkit.Flags of the elements' rounding), stats (a RecipeStats, or
    None) and recipe (a Recipe)."""

    def pack(self):
        """(codes, scales) in the packed layouts checkpoints store (two
        4-bit codes a byte, low nibble first; scales a byte each, or
        float32 little-endian): bytes."""
        scales = np.ascontiguousarray(self._scale_codes, dtype=np.uint32)
        return _fpkit.recipe_pack(self.recipe.recipe, np.ascontiguousarray(self.codes).reshape(-1),
                                  scales.reshape(-1))

    def dequantize(self):
        """The values of the codes in their blocks (fpk_recipe_dequantize)."""
        y = np.empty(self.codes.shape, np.float32)
        _fpkit.recipe_dequantize(self.recipe.recipe, np.ascontiguousarray(self.codes),
                                 self._scale_codes, self._global_bits, self._rows, self._cols, y)
        return y


def recipe_quantize(x, recipe, *, history=None, stats=None, values=True, transformed=False):
    """Quantises X (any float dtype, viewed as float32 rows of its last
    dimension) under RECIPE (a preset name, a spelled-out recipe or a
    Recipe): per block the scale by the recipe's rule and every element
    rounded once into its element format, exactly as
    fpk_recipe_quantize.  HISTORY is the fpkit.AmaxHistory a delayed
    recipe (history=N) takes its amax from; the caller pushes
    result.amax into it after.  STATS, a RecipeStats of the same recipe,
    gets the statistics added.  VALUES=False skips the dequantised
    values; TRANSFORMED=True also returns the quantiser's input (X after
    the RHT) as .transformed.  A Quantized."""
    r = recipe if isinstance(recipe, Recipe) else Recipe(recipe)
    a, rows, cols, inp, dtype = _view(x)
    nb, br, bc = r.blocks(rows, cols)
    codes = np.empty(a.shape, np.uint8)
    scales = np.empty(nb, np.uint32)
    y = np.empty(a.shape, np.float32) if values else None
    xt = np.empty(a.shape, np.float32) if transformed else None
    core = None
    if stats is not None:
        if not isinstance(stats, RecipeStats):
            raise TypeError("stats must be a RecipeStats")
        core = stats._core
    g, amax, fl = _fpkit.recipe_quantize(r.recipe, a.reshape(-1), rows, cols, codes.reshape(-1),
                                         scales, None if y is None else y.reshape(-1),
                                         None if xt is None else xt.reshape(-1), history, core)
    q = Quantized()
    q.recipe, q.codes, q.values, q.transformed = r, codes, y, xt
    q._scale_codes, q._global_bits, q._rows, q._cols = scales, g, rows, cols
    sdtype = _dtypes.format_dtype(r.scale)
    sc = scales.astype(_dtypes.code_dtype(r.scale)).reshape(br, bc)
    q.scales = sc.view(sdtype) if sdtype.itemsize == sc.dtype.itemsize else sc
    q.global_scale = float(np.array([g], np.uint32).view(np.float32)[0])
    q.amax, q.flags = amax, Flags(fl)
    q.stats = stats
    q.input, q.input_dtype = inp, dtype
    return q


class RecipeStats:
    """A recipe's statistics over tensors (fpk_recipe_stats): count,
    zeros, nonfinite, flushed, saturated, subnormal (elements), x2 and e2
    (the sums behind sqnr_db), blocks, zero_blocks, nan_blocks,
    scale_underflow, scale_saturated, scale_min, scale_max, scale_hist and
    range_hist ({"min", "counts"}: floor(log2) of the blocks' decoding
    scales and of their dynamic ranges); merged with +, written and read
    as the library's JSON."""

    def __init__(self, recipe, _core=None):
        r = recipe if isinstance(recipe, Recipe) else Recipe(recipe)
        self._core = _core if _core is not None else _fpkit.RecipeStatsCore(r.recipe)

    def to_dict(self):
        d = json.loads(self._core.to_json())
        d["sqnr_db"] = self.sqnr_db
        return d

    def to_json(self):
        return self._core.to_json()

    @classmethod
    def from_json(cls, text):
        core = _fpkit.RecipeStatsCore.from_json(text)
        return cls(json.loads(text)["recipe"], _core=core)

    @property
    def sqnr_db(self):
        v = self._core.sqnr()
        return v if math.isfinite(v) else None

    def __getattr__(self, key):
        d = json.loads(self._core.to_json())
        if key in d:
            return d[key]
        raise AttributeError(key)

    def __add__(self, other):
        if not isinstance(other, RecipeStats):
            return NotImplemented
        core = self._core.copy()
        core.merge(other._core)
        return RecipeStats(self.recipe, _core=core)

    def __repr__(self):
        return f"<fpkit.RecipeStats {self.recipe}: {self.count} elements, SQNR {self.sqnr_db}>"


def recipe_stats(x, recipe, *, history=None):
    """The statistics of quantising X under RECIPE: a RecipeStats."""
    s = RecipeStats(recipe)
    recipe_quantize(x, recipe, history=history, stats=s, values=False)
    return s
