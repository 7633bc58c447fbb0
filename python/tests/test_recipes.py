"""The block-scaled recipes against tests/recipe_dump (fpk_recipe_quantize
in a C program): codes, scales, the global scale and the values, bit for
bit, for every preset and a few spelled-out recipes (stochastic rounding
among them); their statistics merged and through JSON."""

import json

import numpy as np
import pytest

import fpkit
from conftest import run, tool

SPELLED = ["e4m3/e8m0/floor/1x32", "e5m2/e8m0/rceil/1x32,round=sr,sr_bits=8,seed=3",
           "e2m1/e4m3/nvfp4/16x16,rht", "e4m3/fp32/amax/0x0,margin=1,pow2",
           "e2m3/e8m0/even/1x32", "e2m1/e4m3/nvfp4-torchao/1x16"]


def data(rng, rows, cols):
    mags = np.exp2(rng.uniform(-30, 10, rows))[:, None]
    x = (rng.standard_normal((rows, cols)) * mags).astype(np.float32)
    x[rng.random((rows, cols)) < 0.1] = 0
    if rows > 5:
        x[1] = 0
        x[3, 5] = np.nan
        x[4, 7] = -np.inf
    return x


def dump(recipe, x):
    rows, cols = x.shape
    out = run([tool("recipe_dump"), recipe, str(rows), str(cols)], x.tobytes())
    n = x.size
    nb = fpkit.Recipe(recipe).blocks(rows, cols)[0]
    codes = np.frombuffer(out[:n], np.uint8).reshape(x.shape)
    scales = np.frombuffer(out[n:n + 4 * nb], np.uint32)
    (glob,) = np.frombuffer(out[n + 4 * nb:n + 4 * nb + 4], np.uint32)
    y = np.frombuffer(out[n + 4 * nb + 4:], np.float32).reshape(x.shape)
    return codes, scales, int(glob), y


@pytest.mark.parametrize("recipe", fpkit.recipes() + SPELLED)
def test_against_recipe_dump(recipe, rng):
    cases = 0
    for rows, cols in ((64, 256), (33, 80), (1, 16), (7, 0)):
        r = fpkit.Recipe(recipe)
        if r.rht and cols % 16:
            continue
        x = data(rng, rows, cols) if cols else np.zeros((rows, 0), np.float32)
        codes, scales, glob, y = dump(recipe, x)
        h = fpkit.AmaxHistory(r.history) if r.history else None
        q = fpkit.recipe_quantize(x, recipe, history=h)
        assert np.array_equal(q.codes, codes)
        assert np.array_equal(q._scale_codes, scales)
        assert q._global_bits == glob
        assert np.array_equal(q.values.view(np.uint32), y.view(np.uint32))
        assert np.array_equal(q.dequantize().view(np.uint32), y.view(np.uint32))
        fq = fpkit.quantize(x, recipe=recipe, history=h)
        assert np.array_equal(fq.view(np.uint32), y.view(np.uint32))
        cases += x.size
    print(f"{recipe}: {cases} elements against recipe_dump, 0 mismatches")


def test_shapes_and_dtypes(rng):
    x = data(rng, 48, 64).reshape(3, 16, 64)
    q = fpkit.recipe_quantize(x, "mxfp8-e4m3")
    assert q.codes.shape == x.shape and q.scales.shape == (48, 2)
    assert np.array_equal(q.values.reshape(48, 64).view(np.uint32),
                          fpkit.recipe_quantize(x.reshape(48, 64), "mxfp8-e4m3").values
                          .view(np.uint32))
    assert fpkit.quantize(x.astype(np.float64), recipe="mxfp4").dtype == np.float64
    h = x.astype(np.float16)
    assert np.array_equal(fpkit.quantize(h, recipe="nvfp4").view(np.uint32),
                          fpkit.quantize(h.astype(np.float32), recipe="nvfp4").view(np.uint32))
    packed_codes, packed_scales = fpkit.recipe_quantize(x, "mxfp4").pack()
    assert len(packed_codes) == x.size // 2 and len(packed_scales) == x.size // 32


def test_stats_merge_and_json(rng):
    """(A recipe without a per-tensor scale: NVFP4's depends on the whole
    tensor's amax.)"""
    x = data(rng, 64, 128)
    whole = fpkit.recipe_stats(x, "mxfp4")
    parts = fpkit.recipe_stats(x[:32], "mxfp4") + fpkit.recipe_stats(x[32:], "mxfp4")
    for k in ("count", "zeros", "nonfinite", "flushed", "saturated", "subnormal", "blocks",
              "zero_blocks", "nan_blocks", "scale_hist", "range_hist"):
        assert getattr(whole, k) == getattr(parts, k), k
    back = fpkit.RecipeStats.from_json(whole.to_json())
    assert back.to_dict() == whole.to_dict()
    assert json.loads(whole.to_json())["recipe"] == fpkit.Recipe("mxfp4").recipe
    assert whole.sqnr_db is not None and whole.sqnr_db > 0
    with pytest.raises(fpkit.Error, match="do not merge"):
        whole + fpkit.recipe_stats(x, "nvfp4")
    with pytest.raises(fpkit.Error):
        fpkit.RecipeStats.from_json('{"recipe": "nvfp4"}')


def test_delayed_history(rng):
    x = data(rng, 8, 64)
    x[np.isnan(x) | np.isinf(x)] = 0
    h = fpkit.AmaxHistory(4)
    q1 = fpkit.recipe_quantize(x, "fp8-tensor-delayed", history=h)
    h.push(q1.amax)
    q2 = fpkit.recipe_quantize(x, "fp8-tensor-delayed", history=h)
    assert h.values() == [q1.amax]
    assert not np.array_equal(q1.codes, q2.codes)
    with pytest.raises(fpkit.Error, match="history"):
        fpkit.recipe_quantize(x, "fp8-tensor-delayed")


def test_recipe_errors():
    x = np.ones((2, 32), np.float32)
    with pytest.raises(fpkit.Error, match="recipe"):
        fpkit.recipe_quantize(x, "nvfp5")
    with pytest.raises(fpkit.Error, match="RHT"):
        fpkit.recipe_quantize(np.ones((2, 24), np.float32), "nvfp4-rht")
    with pytest.raises(TypeError, match="format or a recipe"):
        fpkit.quantize(x, "e4m3", recipe="mxfp4")
    with pytest.raises(TypeError, match="unsupported dtype"):
        fpkit.recipe_quantize(np.ones(4, np.int32), "mxfp4")
    with pytest.raises(ValueError):
        fpkit.AmaxHistory(0)
