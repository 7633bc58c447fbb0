"""fpkit.stats against fpgrad --json on the bundled sample dump, tensor by
tensor, field by field (every statistic and the SQNR, bit for bit), under
several sets of options; Stats merged with + against fpgrad's total; the
JSON written and read back."""

import glob
import json
import math

import numpy as np
import pytest

import fpkit
from conftest import read_safetensors, run, sample_dir, tool

# fields of fpgrad's tensors that describe the dump, not the statistics
DUMP_FIELDS = {"name", "file", "step", "loss_scaled", "auto"}

RUNS = [
    ([], {}),
    (["--round", "sr"], {"round": "sr"}),
    (["--round", "rtz", "--no-sqnr", "--formats", "e4m3fnuz,e5m2,e2m3,bf16,tf32"],
     {"round": "rtz", "sqnr": False, "formats": ("e4m3fnuz", "e5m2", "e2m3", "bf16", "tf32")}),
    (["--scale", "1024", "--loss-scaled", ".", "--formats", "fp16,e4m3,e2m1,fp64,e8m0,e3m4"],
     {"formats": ("fp16", "e4m3", "e2m1", "fp64", "e8m0", "e3m4")}),
    (["--scale", "3", "--loss-scaled", ".", "--round", "sr", "--formats", "fp16,e4m3,e2m1"],
     {"round": "sr", "formats": ("fp16", "e4m3", "e2m1")}),
    (["--round", "rup", "--formats", "fp16,bf16,e4m3,e5m2,e4m3fnuz,e3m2,e8m0,e5m7,e6m1fnuz"],
     {"round": "rup", "formats": ("fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e3m2", "e8m0",
                                  "e5m7", "e6m1fnuz")}),
]


def sample_tensors():
    out = {}
    for f in sorted(glob.glob(f"{sample_dir()}/*.safetensors")):
        for k, v in read_safetensors(f).items():
            out[f, k] = v
    return out


@pytest.fixture(scope="module")
def tensors():
    return sample_tensors()


@pytest.mark.parametrize("argv,kw", RUNS, ids=[" ".join(a) or "default" for a, _ in RUNS])
def test_stats_equal_fpgrad(argv, kw, tensors):
    report = json.loads(run([tool("fpgrad"), "--json", "-", *argv, sample_dir()]))
    assert len(report["tensors"]) == len(tensors) == 128
    fields = mismatches = 0
    total = None
    for row in report["tensors"]:
        s = fpkit.stats(tensors[row["file"], row["name"]], scale=row["scale"], name=row["name"],
                        **kw)
        d = s.to_dict()
        for k, v in row.items():
            if k in DUMP_FIELDS and k != "name":
                continue
            fields += 1
            if d.get(k) != v:
                mismatches += 1
                print(f"{row['name']}: {k}: fpgrad {v}, fpkit {d.get(k)}")
        total = s if total is None else total + s
    print(f"fpgrad {' '.join(argv)}: {len(report['tensors'])} tensors, {fields} fields, "
          f"{mismatches} mismatches")
    assert mismatches == 0
    # the total: counts, histogram and the SQNR of the exact sums
    t = total.to_dict()
    for k, v in report["total"].items():
        if k not in ("tensors", "files", "auto"):
            assert t[k] == v, k


def test_merge_is_the_whole(rng):
    """Statistics of parts merged equal those of the whole, but for SR's
    counters (docs/DESIGN.md "Tensor statistics")."""
    x = (rng.standard_normal(300_000) * 1e-3).astype(np.float32)
    x[::7] = 0
    whole = fpkit.stats(x, sqnr=False)
    parts = fpkit.stats(x[:123_457], sqnr=False) + fpkit.stats(x[123_457:], sqnr=False)
    a, b = whole.to_dict(), parts.to_dict()
    a.pop("shape"), b.pop("shape", None)
    assert a == b
    assert sum([fpkit.stats(x[:10], sqnr=False), fpkit.stats(x[10:], sqnr=False)]).count == x.size


def test_json_round_trip(rng):
    x = (rng.standard_normal((64, 100)) * 1e-4).astype(np.float32)
    s = fpkit.stats(x, formats=("fp16", "e4m3", "e2m1"), round="rtz", name="w")
    back = fpkit.Stats.from_json(s.to_json())
    assert back.to_dict() == s.to_dict()
    # exact sums survive: merging read-back statistics equals merging the originals
    y = (rng.standard_normal(5000) * 3).astype(np.float32)
    t = fpkit.stats(y, formats=("fp16", "e4m3", "e2m1"), round="rtz")
    assert (back + fpkit.Stats.from_json(t.to_json())).to_dict() == (s + t).to_dict()
    # the library's own JSON reads it, and gives the same counts
    lib = json.loads(s.to_json())
    for k in ("count", "zeros", "nonfinite", "amax", "log2_hist"):
        assert lib[k] == s.to_dict()[k]


def test_from_fpgrad_report(tensors):
    report = json.loads(run([tool("fpgrad"), "--json", "-", "--round", "rna", sample_dir()]))
    rows = [fpkit.Stats.from_json(json.dumps(r), round=report["round"]) for r in report["tensors"]]
    for r, s in zip(report["tensors"], rows):
        mine = fpkit.stats(tensors[r["file"], r["name"]], round="rna", sqnr=False)
        assert s.count == mine.count and s.amax == mine.amax
        assert {n: (f.underflow, f.subnormal, f.overflow) for n, f in s.fmt.items()} == {
            n: (f.underflow, f.subnormal, f.overflow) for n, f in mine.fmt.items()}
    assert sum(rows).count == report["total"]["count"]


def test_dtypes_and_orders(rng):
    """Every dtype the statistics read gives the statistics of its values;
    a Fortran-ordered array is read in storage order (as fpgrad reads a
    Fortran-ordered .npy), which changes only the SQNR's lanes."""
    x = (rng.standard_normal((300, 257)) * 1e-5).astype(np.float32)
    ref = fpkit.stats(x.astype(np.float16).astype(np.float64), sqnr=False).to_dict()
    got = fpkit.stats(x.astype(np.float16), sqnr=False).to_dict()
    ref.pop("dtype"), got.pop("dtype")
    assert got == ref
    f = np.asfortranarray(x)
    a, b = fpkit.stats(f).to_dict(), fpkit.stats(x.T.copy()).to_dict()
    b["shape"] = a["shape"]
    assert a == b


def test_refusals():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="unknown format"):
        fpkit.stats(x, formats=("fp16", "fp99"))
    with pytest.raises(ValueError, match="listed twice"):
        fpkit.stats(x, formats=("fp16", "half"))
    with pytest.raises(ValueError, match="1 to 16 formats"):
        fpkit.stats(x, formats=("fp16",) * 17)
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="finite and positive"):
            fpkit.stats(x, scale=bad)
    with pytest.raises(fpkit.Error, match="do not merge"):
        fpkit.stats(x) + fpkit.stats(x, round="rtz")
    with pytest.raises(fpkit.Error, match="stats JSON"):
        fpkit.Stats.from_json('{"count": 1}')
    with pytest.raises(fpkit.Error, match="stats JSON"):
        fpkit.Stats.from_json("[")
    with pytest.raises(TypeError, match="unsupported dtype"):
        fpkit.stats(np.arange(5))
