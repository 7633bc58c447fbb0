"""fpkit.formats, fpkit.format(...).info() and fpkit.inspect against
fpinspect --json: the same keys and values (rel_error to its last bit:
fpinspect rounds it twice through 64-bit MPFR values)."""

import json
import math

import numpy as np
import pytest

import fpkit
from conftest import run, tool

EXTRA = ["e1m3", "e1m0", "e5m3", "e6m1fn", "e3m4fnuz", "e11m52fnuz", "e2m0", "e8m7"]
MODES = ["rne", "rna", "rtz", "rup", "rdn", "rod"]


def fpinspect(*args):
    return [json.loads(line) for line in run([tool("fpinspect"), "--json", *args]).splitlines()]


def same(a, b, path=""):
    """A and B equal, floats under the key rel_error to 4 ulps."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} against {list(b)}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif path.endswith("rel_error") and isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=4 * 2.0**-52), f"{path}: {a} against {b}"
    else:
        assert a == b and type(a) == type(b), f"{path}: {a!r} against {b!r}"


def test_formats_list():
    want = [f["name"] for f in fpinspect("--list-formats")[0]["formats"]]
    assert fpkit.formats() == want
    for name in want:
        f = fpkit.format(name)
        assert f.name == name and f.width == 1 + f.exp_bits + f.man_bits - (f.special == "e8m0")
    assert fpkit.format("E4M3FN") == fpkit.format("e4m3")
    assert fpkit.format("e5m10").name == "fp16"
    assert fpkit.format("e4m3").max == 448 and fpkit.format("e4m3").min_subnormal == 2.0**-9
    assert fpkit.format("e8m0").min_subnormal is None


@pytest.mark.parametrize("name", fpkit.formats() + EXTRA)
def test_info(name):
    n = 0
    for mode in MODES:
        for opts in ([], ["--ftz"], ["--saturate"]):
            want = fpinspect("--round", mode, *opts, "--info", name)[0]
            got = fpkit.format(name).info(mode, ftz="--ftz" in opts, saturate="--saturate" in opts)
            same(got, want)
            n += 1
    print(f"info {name}: {n} runs of fpinspect, 0 mismatches")
    assert fpkit.format(name).thresholds == {k: fpinspect("--info", name)[0][k]
                                             for k in ("to_zero", "overflow")}


VALUES = ["0.1", "-0.1", "1", "-0", "0", "65504", "65520", "65519.99", "1e-8", "-3e-8",
          "2.98023223876953125e-08", "0x1.8p-3", "0x1p-149", "-0X.8P1", "0x10", "0b1", "inf",
          "-inf", "nan", "448", "464", "465", "1e38", "3.4028235e38", "1e-45", "1e-99999",
          "123456789012345678901234567890", "0.000030517578125", "1.5", "2.5", "7.75", "0x3c00",
          "5.", ".5", "2^-24", "-2^-133", "3*2^-10", "1.000488281250000909"]


def is_pattern(v):
    return v[:2] == "0b" or (v[:2] == "0x" and not any(c in v for c in ".pP"))


@pytest.mark.parametrize("name", ["fp32", "fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e2m1",
                                  "e8m0", "tf32", "fp64", "e3m2", "e5m3"])
def test_inspect_values(name):
    to = ["e4m3", "fp16", "e2m1", "e8m0", "bf16"]
    n = 0
    for mode, opts in (("rne", []), ("rtz", ["--saturate"]), ("rup", ["--ftz"]), ("rdn", [])):
        vals = [v for v in VALUES if not is_pattern(v) or int(v, 0) < 1 << fpkit.format(name).width]
        want = fpinspect("--format", name, "--round", mode, *opts, "--to", ",".join(to), "--",
                         *vals)
        for v, w in zip(vals, want):
            got = fpkit.inspect(v, name, mode, ftz="--ftz" in opts, saturate="--saturate" in opts,
                                to=to)
            same(got, w, f"{name} {mode} {v}")
            n += 1
    f = fpkit.format(name)
    if f.width <= 8:  # every encoding
        pats = [f"0x{a:02x}" for a in range(1 << f.width)]
        want = fpinspect("--format", name, "--to", "fp16,e5m2", *pats)
        for a, w in enumerate(want):
            same(fpkit.inspect(a, name, to=["fp16", "e5m2"]) | {"input": pats[a]}, w)
            n += 1
    print(f"inspect {name}: {n} values against fpinspect, 0 mismatches")


def test_inspect_floats_and_errors():
    d = fpkit.inspect(0.1, "fp16")
    assert d["bits"] == "0x2e66" and d["input"] == "0.1"
    assert d["rounding"]["direction"] == "down"
    assert fpkit.inspect(np.float32(1.5), "e2m1")["bits"] == "0x3"
    with pytest.raises(fpkit.Error, match="unexpected character"):
        fpkit.inspect("1.2.3", "fp16")
    with pytest.raises(fpkit.Error, match="wider than fp16"):
        fpkit.inspect("0x12345", "fp16")
    with pytest.raises(fpkit.Error, match="wider than e4m3"):
        fpkit.inspect(256, "e4m3")
    with pytest.raises(ValueError, match="unknown format"):
        fpkit.inspect("1", "fp17")
    with pytest.raises(ValueError, match="deterministic"):
        fpkit.inspect("1", "fp16", "sr")
    with pytest.raises(TypeError):
        fpkit.inspect([1], "fp16")
