"""Arrays in and out: which fpkit format an array's dtype holds, NumPy
arrays from PyTorch tensors and DLPack producers (no copy on the CPU), and
results handed back in the caller's kind of array.

An array of a format's encodings takes fpk_array_size bytes an element
(1, 2, 4 or 8), right-aligned: a float32 array holds fp32 encodings, a
float16 one fp16, an ml_dtypes float8_e4m3fn one e4m3, a uint8 array any
format of at most 8 bits."""

import numpy as np

from . import _fpkit

try:
    import ml_dtypes
except ImportError:  # the results are raw encodings then
    ml_dtypes = None

# NumPy's own float types and ml_dtypes' types, by dtype name: the fpkit
# format whose encodings they hold.  (ml_dtypes' float8_e4m3, with
# infinities, and float8_e4m3b11fnuz have no fpkit format of that name.)
_NUMPY = {"float64": "fp64", "float32": "fp32", "float16": "fp16"}
_ML_DTYPES = {
    "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2fnuz": "e5m2fnuz",
    "float8_e3m4": "e3m4",
    "float6_e3m2fn": "e3m2",
    "float6_e2m3fn": "e2m3",
    "float4_e2m1fn": "e2m1",
    "float8_e8m0fnu": "e8m0",
}
_TORCH_FLOAT8 = {
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2fnuz": "e5m2fnuz",
    "float8_e8m0fnu": "e8m0",
}
_CODES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Input:
    """An argument as a NumPy array: ARRAY, the fpkit format its dtype
    holds (None for integers: encodings of a format named elsewhere), and
    whether it came as a torch tensor (TORCH, for the results) or as a
    Python scalar (SCALAR)."""

    def __init__(self, array, fmt, torch=None, scalar=False):
        self.array, self.fmt, self.torch, self.scalar = array, fmt, torch, scalar


def _from_torch(t):
    if t.device.type != "cpu":
        raise TypeError(f"a tensor on {t.device}: fpkit reads tensors on the CPU (t.cpu())")
    t = t.detach()
    name = str(t.dtype).removeprefix("torch.")
    if name in _NUMPY:
        return Input(t.resolve_conj().numpy(), _NUMPY[name], torch=t.dtype)
    import torch

    if name == "bfloat16":
        return Input(t.view(torch.int16).numpy().view(np.uint16), "bf16", torch=t.dtype)
    if name in _TORCH_FLOAT8:
        return Input(t.view(torch.uint8).numpy(), _TORCH_FLOAT8[name], torch=t.dtype)
    return Input(t.numpy(), None, torch=t.dtype)


def array_in(x):
    """X as an Input: a NumPy array (as is), a torch tensor (its memory,
    viewed), an object with __dlpack__ (numpy.from_dlpack), or anything
    numpy.asarray takes (a Python number gives a 0-d array, SCALAR)."""
    if type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "device"):
        return _from_torch(x)
    scalar = False
    if isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__dlpack__") and not isinstance(x, np.generic):
        a = np.from_dlpack(x)
    else:
        scalar = not isinstance(x, np.generic) and np.ndim(x) == 0
        a = np.asarray(x)
    if not a.dtype.isnative:  # the other byte order: read by value
        a = a.astype(a.dtype.newbyteorder("="))
    return Input(a, dtype_format(a.dtype), scalar=scalar)


def dtype_format(dtype):
    """The fpkit format whose encodings DTYPE holds, or None."""
    name = np.dtype(dtype).name
    if name in _NUMPY:
        return _NUMPY[name]
    if ml_dtypes is not None and name in _ML_DTYPES and np.dtype(dtype).itemsize in (1, 2):
        return _ML_DTYPES[name]
    return None


def format_dtype(fmt):
    """The dtype of arrays of FMT's encodings: NumPy's float, ml_dtypes'
    type where ml_dtypes has the format, else unsigned integers of its
    size."""
    d = _fpkit.descriptor(fmt)
    name = d["name"]
    for k, v in _NUMPY.items():
        if v == name:
            return np.dtype(k)
    if ml_dtypes is not None:
        for k, v in _ML_DTYPES.items():
            if v == name and hasattr(ml_dtypes, k):
                return np.dtype(getattr(ml_dtypes, k))
    return np.dtype(_CODES[d["size"]])


def code_dtype(fmt):
    """Unsigned integers of FMT's encoding size."""
    return np.dtype(_CODES[_fpkit.descriptor(fmt)["size"]])


def as_codes(inp, fmt, what):
    """INP's array as a C-contiguous array of FMT's encodings (unsigned
    integers, viewed without a copy where it is contiguous already):
    integers are checked to fit FMT's width, an array of a float dtype must
    hold FMT itself."""
    d = _fpkit.descriptor(fmt)
    a = inp.array
    if inp.fmt is not None:
        if _fpkit.descriptor(inp.fmt)["name"] != d["name"]:
            raise TypeError(f"{what}: an array of {a.dtype} holds {inp.fmt} encodings, not {d['name']}")
        return np.ascontiguousarray(a).view(_CODES[d["size"]])
    if a.dtype.kind not in "ui" and not (a.dtype.kind == "b" and a.size == 0):
        raise TypeError(f"{what}: encodings are integers, or arrays of the format's dtype; "
                        f"not {a.dtype}")
    if a.size and (a.min() < 0 or (d["width"] < 64 and int(a.max()) >> d["width"])):
        raise ValueError(f"{what}: encodings of {d['name']} lie in 0 .. 2^{d['width']} - 1")
    return np.ascontiguousarray(a, dtype=_CODES[d["size"]])


def values_in(inp, what):
    """INP's array as C-contiguous encodings of the format its dtype holds,
    and that format: the source of a rounding."""
    if inp.fmt is None:
        raise TypeError(f"{what}: unsupported dtype {inp.array.dtype}; fpkit reads float64, "
                        "float32, float16 and ml_dtypes' formats (bfloat16, float8_e4m3fn, ...); "
                        "encodings go to fpkit.decode or fpkit.convert")
    return np.ascontiguousarray(inp.array), inp.fmt


def array_out(a, inp, fmt=None):
    """A result A (a NumPy array holding FMT's encodings, or plain values)
    in the caller's kind: a torch tensor for a torch input, a Python scalar
    for Python scalars, else A (ml_dtypes' type where it has FMT)."""
    if fmt is not None and a.dtype != format_dtype(fmt):
        a = a.view(format_dtype(fmt)) if a.dtype.itemsize == format_dtype(fmt).itemsize else a
    if inp is not None and inp.torch is not None:
        return _to_torch(a, fmt)
    if inp is not None and inp.scalar and a.ndim == 0:
        return a[()].item() if a.dtype.kind in "uib" or a.dtype.name in _NUMPY else a[()]
    return a


def _to_torch(a, fmt):
    import torch

    name = _fpkit.descriptor(fmt)["name"] if fmt else None
    if a.dtype.name in _NUMPY or a.dtype.kind in "uib":
        if a.dtype == np.uint16 or a.dtype == np.uint32 or a.dtype == np.uint64:
            a = a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize])
        t = torch.from_numpy(np.ascontiguousarray(a))
    else:  # an ml_dtypes array: its encodings
        t = torch.from_numpy(np.ascontiguousarray(a).view(_CODES[a.dtype.itemsize]).view(
            {1: np.uint8, 2: np.int16}[a.dtype.itemsize]))
    if name == "bf16":
        return t.view(torch.bfloat16)
    for k, v in _TORCH_FLOAT8.items():
        if v == name and hasattr(torch, k):
            return t.view(getattr(torch, k))
    return t
