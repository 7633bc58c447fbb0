"""What the tests share: the C tools they compare the package with (found
through FPKIT_BINDIR, FPKIT_TESTDIR and FPKIT_SRCDIR, which
tests/check_python.sh sets; a test that needs one is skipped without it),
a reader of the bundled sample dump, and the seed of the random data
(FPK_SEED replays a run; it is printed)."""

import json
import os
import struct
import subprocess

import numpy as np
import pytest

SEED = int(os.environ.get("FPK_SEED", "20240611"))


def pytest_report_header(config):
    return f"fpkit tests: seed {SEED} (FPK_SEED replays it)"


def _path(var, *parts):
    d = os.environ.get(var)
    p = os.path.join(d, *parts) if d else None
    if not p or not os.path.exists(p):
        pytest.skip(f"{os.path.join(*parts)} is not there (set {var})")
    return p


def tool(name):
    """A program of fpkit's build: bin/NAME or tests/NAME."""
    if name.startswith("fp"):
        return _path("FPKIT_BINDIR", name)
    return _path("FPKIT_TESTDIR", name)


def run(argv, data=b""):
    r = subprocess.run(argv, input=data, capture_output=True, check=False)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.decode()[:500]}")
    return r.stdout


def sample_dir():
    return _path("FPKIT_SRCDIR", "tests", "data", "sample")


def read_safetensors(path):
    """{name: array} of a safetensors file of float tensors."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        lo, hi = v["data_offsets"]
        dt = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}[v["dtype"]]
        out[k] = np.frombuffer(b[8 + n + lo:8 + n + hi], dt).reshape(v["shape"])
    return out


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def ml_dtypes_or_skip():
    return pytest.importorskip("ml_dtypes")
