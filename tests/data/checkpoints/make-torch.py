#!/usr/bin/env python3
"""Writes torch/torchN.pt with torch.save (N: torch's major version) and
torch/torchN.safetensors, the same floating-point tensors written by hand (a transpose in its
storage's order, as fpkit reads it):
a state dict with a view of a transposed storage, a strided slice, a
storage shared by two tensors, an int64 buffer (listed, not read), an
optimizer's state nested in dicts and lists, and with torch 2 the 8-bit
float types.  tests/check_checkpoints compares the two.  Run it with each
torch at hand (Debian's python3-torch is 1.13); the outputs are committed,
so that make check needs no torch.
"""
import collections
import json
import os
import struct

import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch")
MAJOR = torch.__version__.split(".")[0]

ST_DTYPES = {torch.float32: ("F32", torch.int32), torch.float16: ("F16", torch.int16),
             torch.bfloat16: ("BF16", torch.int16), torch.float64: ("F64", torch.int64)}
if hasattr(torch, "float8_e4m3fn"):
    ST_DTYPES[torch.float8_e4m3fn] = ("F8_E4M3", torch.uint8)
    ST_DTYPES[torch.float8_e5m2] = ("F8_E5M2", torch.uint8)
if hasattr(torch, "float8_e8m0fnu"):
    ST_DTYPES[torch.float8_e8m0fnu] = ("F8_E8M0", torch.uint8)


def values(n, k):
    return (torch.arange(n, dtype=torch.float64) * 0.37 + k).sin() * 0.05


def state():
    base = values(24, 1).reshape(6, 4).to(torch.float16)
    wide = values(30, 2).reshape(5, 6).to(torch.float16)
    embed = values(128, 3).reshape(8, 16).float()
    model = collections.OrderedDict()
    model["position_ids"] = torch.arange(8).reshape(1, 8)
    model["embed.weight"] = embed
    model["proj.weight"] = values(128, 4).reshape(16, 8).to(torch.bfloat16)
    model["proj_t.weight"] = base.t()
    model["slice.weight"] = wide[1:, 2:5]
    model["lm_head.weight"] = embed  # tied: one storage
    if hasattr(torch, "float8_e4m3fn"):
        model["fp8.weight"] = (values(32, 5) * 40).reshape(4, 8).to(torch.float8_e4m3fn)
    if hasattr(torch, "float8_e8m0fnu"):
        model["fp8.scale"] = torch.tensor([0.25, 1.0, 8.0, 2.0 ** -20]).to(torch.float8_e8m0fnu)
    optim = {"state": {0: {"step": torch.tensor(3.0), "exp_avg": values(128, 6).reshape(8, 16).float()}},
             "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0], "amsgrad": False}]}
    return {"model": model, "optimizer": optim, "epoch": 2}


def flat(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from flat(v, f"{path}.{k}" if path else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from flat(v, f"{path}.{i}" if path else str(i))
    elif isinstance(obj, torch.Tensor):
        yield path, obj


def write_st(path, tensors):
    header, data = {}, b""
    for name, t in tensors:
        if t.dtype not in ST_DTYPES:
            continue
        dtype, as_int = ST_DTYPES[t.dtype]
        if t.dim() == 2 and not t.is_contiguous() and t.t().is_contiguous():
            # a transpose: fpkit reads it in its storage's order, as .npy's
            # Fortran-order arrays
            t = t.t().contiguous().t()
            b = t.t().contiguous().view(as_int).numpy().tobytes()
        else:
            b = t.contiguous().view(as_int).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def main():
    os.makedirs(HERE, exist_ok=True)
    s = state()
    torch.save(s, os.path.join(HERE, f"torch{MAJOR}.pt"))
    write_st(os.path.join(HERE, f"torch{MAJOR}.safetensors"), list(flat(s)))


if __name__ == "__main__":
    main()
