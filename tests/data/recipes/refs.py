"""The reference quantisers fpkit's recipes are compared with: torchao's,
called as a training script would, their outputs turned into fpkit's
layout (one code a byte, scales as encodings, row-major).  Used by
make-golden.py, which writes tests/data/recipes/golden.bin, and by
tests/check_recipe_torchao.py, which compares live.

Each case: (recipe, rows, cols, reference); a reference takes the float32
tensor (rows x cols) and returns (codes, scales, global, values): codes a
uint8 array of rows*cols, scales a uint32 array of the blocks' encodings,
global the float32 bits of the per-tensor decoding scale (1.0 when none),
values the dequantised float32 array or None.

The NVFP4 recipe of Transformer Engine's arithmetic ("nvfp4", "nvfp4-2d",
"nvfp4-rht") is compared with the plain-PyTorch transcription torchao's
repository keeps among its tests
(test/prototype/moe_training/nvfp4_training/nvfp4_reference.py), which
the pip package does not install: set TORCHAO_SRC to a torchao checkout to
include those cases.
"""

import importlib.util
import json
import os
import struct
import sys

import numpy as np
import torch

from torchao.prototype.mx_formats import mx_tensor
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
from torchao.prototype.mx_formats.kernels import unpack_uint4
from torchao.prototype.mx_formats import nvfp4_tensor
from torchao.prototype.blockwise_fp8_training import kernels as blockwise
from torchao.float8 import float8_utils

ONE = 0x3F800000


def f32_bits(t):
    return t.detach().float().contiguous().view(torch.int32).numpy().astype(np.uint32)


def u8(t):
    return t.contiguous().view(torch.uint8).numpy().reshape(-1).copy()


def mx(elem, mode):
    def ref(x):
        scale, data = mx_tensor.to_mx(x, elem, 32, mode)
        if elem == torch.float4_e2m1fn_x2:
            codes = u8(unpack_uint4(data.view(torch.uint8).contiguous()))
        else:
            codes = u8(data)
        y = mx_tensor.to_dtype(data, scale, elem, 32, torch.float32)
        return codes, u8(scale).astype(np.uint32), ONE, y.numpy().reshape(-1)

    return ref


def fp8_tensor_current(x):
    amax = float8_utils.tensor_to_amax(x)
    s = float8_utils.amax_to_scale(amax, torch.float8_e4m3fn)
    q = float8_utils.to_fp8_saturated(x * s, torch.float8_e4m3fn)
    dec = (1.0 / s).float().reshape(1)
    y = q.float() * dec
    return u8(q), f32_bits(dec), ONE, y.numpy().reshape(-1)


def fp8_block_1x128(x):
    q, dec = blockwise.torch_blockwise_scale_act_quant_lhs(x.contiguous(), 128)
    y = (q.float().reshape(-1, 128) * dec.reshape(-1, 1)).reshape(-1)
    return u8(q), f32_bits(dec.contiguous()).reshape(-1), ONE, y.numpy()


def fp8_block_128x128(x):
    q, dec = blockwise.torch_blockwise_scale_weight_quant(x.contiguous(), 128)
    return u8(q), f32_bits(dec.contiguous()).reshape(-1), ONE, None


def nvfp4_torchao(two_level):
    def ref(x):
        pts = None
        if two_level:
            pts = nvfp4_tensor.per_tensor_amax_to_scale(x.abs().max())
        scales, data = nvfp4_tensor.nvfp4_quantize(x, 16, pts)
        codes = u8(unpack_uint4(data.view(torch.uint8).contiguous()))
        t = nvfp4_tensor.NVFP4Tensor.to_nvfp4(x, 16, per_tensor_scale=pts)
        y = t.dequantize(torch.float32).numpy().reshape(-1)
        glob = int(f32_bits(pts.reshape(1))[0]) if two_level else ONE
        return codes, u8(scales).astype(np.uint32), glob, y

    return ref


_te = None


def te_reference():
    """The TE transcription from a torchao checkout, or None."""
    global _te
    src = os.environ.get("TORCHAO_SRC")
    if _te is None and src:
        base = os.path.join(src, "torchao", "prototype", "moe_training", "nvfp4_training")
        pkg = "torchao.prototype.moe_training.nvfp4_training"
        for name, path in (
            (pkg + ".hadamard_utils", os.path.join(base, "hadamard_utils.py")),
            ("nvfp4_reference", os.path.join(src, "test", "prototype", "moe_training",
                                             "nvfp4_training", "nvfp4_reference.py")),
        ):
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        _te = sys.modules["nvfp4_reference"]
    return _te


def nvfp4_te(block):
    def ref(x):
        te = te_reference()
        out = te.nvfp4_reference_quantize(x, x.abs().max(), block=block, layout="plain")
        codes = u8(unpack_uint4(out.codes.contiguous()))
        scales = u8(out.block_scale).astype(np.uint32)
        s_enc = te.global_encode_scale(x.abs().max().float())
        glob = int(f32_bits((1.0 / s_enc).reshape(1))[0])
        return codes, scales, glob, None

    return ref


def nvfp4_te_rht(x):
    """fpkit transforms along rows: X here is A.t(), whose RHT the
    reference computes from A (reference_rht(A) = RHT(A.t()))."""
    te = te_reference()
    a = x.t().contiguous().to(torch.bfloat16)
    xt = te.reference_rht(a)
    out = te.nvfp4_reference_quantize(xt, xt.float().abs().max(), block="1x16",
                                      layout="plain")
    codes = u8(unpack_uint4(out.codes.contiguous()))
    s_enc = te.global_encode_scale(xt.float().abs().max())
    glob = int(f32_bits((1.0 / s_enc).reshape(1))[0])
    return codes, u8(out.block_scale).astype(np.uint32), glob, None


M = ScaleCalculationMode
E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
F4 = torch.float4_e2m1fn_x2

# recipe, the reference function's name (for messages), reference, whether
# it needs TORCHAO_SRC, whether inputs must be bfloat16 values
CASES = [
    ("mxfp8-e4m3", "mx_tensor.to_mx FLOOR", mx(E4, M.FLOOR), False, False),
    ("mxfp8-e5m2", "mx_tensor.to_mx FLOOR", mx(E5, M.FLOOR), False, False),
    ("mxfp6-e2m3", "mx_tensor.to_mx FLOOR", mx(DTYPE_FP6_E2M3, M.FLOOR), False, False),
    ("mxfp6-e3m2", "mx_tensor.to_mx FLOOR", mx(DTYPE_FP6_E3M2, M.FLOOR), False, False),
    ("mxfp4", "mx_tensor.to_mx FLOOR", mx(F4, M.FLOOR), False, False),
    ("e4m3/e8m0/ceil/1x32", "mx_tensor.to_mx CEIL", mx(E4, M.CEIL), False, False),
    ("e2m1/e8m0/ceil/1x32", "mx_tensor.to_mx CEIL", mx(F4, M.CEIL), False, False),
    ("e4m3/e8m0/even/1x32", "mx_tensor.to_mx EVEN", mx(E4, M.EVEN), False, False),
    ("e2m1/e8m0/even/1x32", "mx_tensor.to_mx EVEN", mx(F4, M.EVEN), False, False),
    ("e4m3/e8m0/rceil/1x32", "mx_tensor.to_mx RCEIL", mx(E4, M.RCEIL), False, False),
    ("e5m2/e8m0/rceil/1x32", "mx_tensor.to_mx RCEIL", mx(E5, M.RCEIL), False, False),
    ("e2m1/e8m0/rceil/1x32", "mx_tensor.to_mx RCEIL", mx(F4, M.RCEIL), False, False),
    ("fp8-tensor-current", "float8_utils.amax_to_scale", fp8_tensor_current, False, False),
    ("fp8-block128", "torch_blockwise_scale_act_quant_lhs", fp8_block_1x128, False, False),
    ("fp8-block128x128", "torch_blockwise_scale_weight_quant", fp8_block_128x128, False,
     False),
    ("e2m1/e4m3/nvfp4-torchao/1x16", "nvfp4_quantize, per-tensor scale",
     nvfp4_torchao(True), False, False),
    ("e2m1/e4m3/amax/1x16", "nvfp4_quantize, no per-tensor scale", nvfp4_torchao(False),
     False, False),
    ("nvfp4", "nvfp4_reference_quantize 1x16", nvfp4_te("1x16"), True, False),
    ("nvfp4-2d", "nvfp4_reference_quantize 16x16", nvfp4_te("16x16"), True, False),
    ("nvfp4-rht", "reference_rht + nvfp4_reference_quantize", nvfp4_te_rht, True, True),
]


def sample_tensor(path, name):
    """A float32 tensor of a safetensors file, flattened."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        info = head[name]
        start, end = info["data_offsets"]
        f.seek(8 + n + start)
        return np.frombuffer(f.read(end - start), dtype="<f4").copy()


def inputs(recipe, seed, sample_dir, bf16):
    """The tensors each case is run on: random ones of several magnitudes
    and one made of real gradients (the bundled sample), as (label, x)."""
    rows, cols = {"fp8-block128x128": (128, 128), "fp8-block128": (4, 128), "nvfp4-2d": (16, 32)}.get(recipe, (8, 64))
    g = torch.Generator().manual_seed(seed)
    n = rows * cols
    # Gaussian, scaled per row across 2^-40 .. 2^20, with some zeros and
    # exact block maxima of the formats' edges.
    x = torch.randn(rows, cols, generator=g)
    x *= torch.pow(2.0, torch.randint(-40, 20, (rows, 1), generator=g).float())
    x[torch.rand(rows, cols, generator=g) < 0.05] = 0.0
    out = [("random", x)]
    if recipe != "fp8-block128x128":
        grads = np.concatenate([
            sample_tensor(os.path.join(sample_dir, "step-000919.safetensors"), "actgrad/conv1"),
            sample_tensor(os.path.join(sample_dir, "step-000050.safetensors"), "grad/fc1.weight"),
        ])
        out.append(("sample", torch.from_numpy(grads[:n].copy()).reshape(rows, cols)))
    if bf16:
        out = [(l, t.to(torch.bfloat16).float()) for l, t in out]
    return out
