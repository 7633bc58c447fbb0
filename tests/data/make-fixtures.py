#!/usr/bin/env python3
"""Writes the tensor dump fixtures that tests/check_dump.c reads.

The dumps are written by NumPy, ml_dtypes and safetensors, not by fpkit.
Beside each dump FILE goes FILE.txt, which says what those libraries hold
in it: its tensors (name, dtype, byte order, Fortran order, shape) and
their elements in storage order, each converted to float64 by NumPy or
ml_dtypes and written as the 16 hex digits of the double's bits.

Run it from anywhere (python3 tests/data/make-fixtures.py); it writes next
to itself.  Needs numpy, ml_dtypes and safetensors (pip install numpy
ml_dtypes safetensors).  The outputs are committed; rerun only to change
them.
"""
import json
import os
import struct

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {  # fpkit's name -> NumPy or ml_dtypes type
    "f64": np.float64,
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
}


def sample(dtype, n):
    """N values of DTYPE: zeros, the extremes of its range, infinities and
    NaN where it has them, then ordinary numbers rounded into it."""
    info = ml_dtypes.finfo(dtype) if dtype not in (np.float64, np.float32, np.float16) else np.finfo(dtype)
    special = [0.0, -0.0, 1.0, -2.5, float(info.max), -float(info.max),
               float(info.tiny), float(info.smallest_subnormal),
               -3 * float(info.smallest_subnormal), float("inf"), float("-inf"), float("nan")]
    rng = np.random.default_rng(7)
    extra = list(rng.standard_normal(max(0, n - len(special))) * 3)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array((special + extra)[:n], dtype=np.float64).astype(dtype)


def header(kind):
    return ("# written by tests/data/make-fixtures.py with numpy %s, ml_dtypes %s, "
            "safetensors %s\nkind %s\n" % (np.__version__, ml_dtypes.__version__,
                                          safetensors.__version__, kind))


def tensor_text(name, dtype, big, fortran, arr):
    flat = arr.ravel(order="F" if fortran else "C").astype(np.float64)
    lines = ["tensor %s %s %d %d %d%s %d" % (name, dtype, big, fortran, arr.ndim,
                                             "".join(" %d" % d for d in arr.shape), flat.size)]
    lines += ["%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0] for x in flat]
    return "\n".join(lines) + "\n"


def write_npy(file, dtype, shape, store=None, fortran=False, version=None):
    """An .npy of SHAPE holding sample values of fpkit dtype DTYPE, stored
    as numpy dtype STORE (default: DTYPE's type, little-endian)."""
    arr = sample(DTYPES[dtype], int(np.prod(shape))).reshape(shape)
    if store is not None:
        arr = arr.astype(store)
    if fortran:
        arr = np.asfortranarray(arr)
    path = os.path.join(HERE, file)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            np.lib.format.write_array(f, arr, version=version)
    big = int(arr.dtype.byteorder == ">")
    with open(path + ".txt", "w") as f:
        f.write(header("npy") + tensor_text(file, dtype, big, int(fortran and arr.ndim > 1), arr))


def write_safetensors(file, tensors, metadata):
    """TENSORS: (name, fpkit dtype, shape); the header order is the file's."""
    arrays = {name: sample(DTYPES[dtype], int(np.prod(shape))).reshape(shape)
              for name, dtype, shape in tensors}
    path = os.path.join(HERE, file)
    safetensors.numpy.save_file(arrays, path, metadata=metadata)
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        order = [k for k in json.loads(f.read(n)) if k != "__metadata__"]
    dtypes = {name: dtype for name, dtype, _ in tensors}
    text = header("safetensors")
    text += "".join("meta %s %s\n" % kv for kv in metadata.items())
    text += "".join(tensor_text(name, dtypes[name], 0, 0, arrays[name]) for name in order)
    with open(path + ".txt", "w") as f:
        f.write(text)


def write_raw(file, dtype, shape, store):
    arr = sample(DTYPES[dtype], int(np.prod(shape))).reshape(shape).astype(store)
    path = os.path.join(HERE, file)
    arr.tofile(path)
    with open(path + ".txt", "w") as f:
        f.write(header("raw") + tensor_text(file, dtype, int(arr.dtype.byteorder == ">"), 0, arr))


def main():
    write_npy("f16.npy", "f16", (3, 5))
    write_npy("f32-be-fortran.npy", "f32", (3, 4), store=">f4", fortran=True)
    write_npy("f64-v2.npy", "f64", (2, 2, 3), version=(2, 0))
    write_npy("f32-v3-scalar.npy", "f32", (), version=(3, 0))
    write_npy("bf16.npy", "bf16", (12,))
    write_npy("e5m2.npy", "e5m2", (2, 7))
    write_npy("f16-be-empty.npy", "f16", (0, 3), store=">f2")
    write_safetensors("model.safetensors",
                      [("grad/w", "f32", (2, 3)), ("grad/b", "f16", (13,)),
                       ("weight/w", "bf16", (3, 4)), ("act/x", "e4m3", (4, 4)),
                       ("act/y", "e5m2", (14,)), ("loss", "f64", ()),
                       ("empty", "f32", (0, 2)), ("update/w", "f64", (12,))],
                      {"step": "7", "loss_scale": "65536"})
    write_raw("f16-be.raw", "f16", (4, 3), ">f2")


if __name__ == "__main__":
    main()
