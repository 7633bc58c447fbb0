#!/usr/bin/env python3
"""Writes the quantised and sharded checkpoints that tests/check_checkpoints
and tests/check_checkpoints.sh read, each following its published
convention (fpkit-checkpoints(5) describes them):

  mxfp4/      gpt-oss MXFP4: X_blocks U8 [..., G, 16] of E2M1 code pairs,
              the even element in the low nibble; X_scales U8 [..., G],
              E8M0 (2^(s - 127)); OCP MX v1.0's scale rule
  nvfp4/      ModelOpt NVFP4: X.weight U8 [R, C/2] (pairs as above),
              X.weight_scale F8_E4M3 [R, C/16], X.weight_scale_2 F32 [],
              X.input_scale F32 []: value = P * (S * S2) in float32
  fp8/        DeepSeek-V3 FP8: X.weight F8_E4M3 [R, C], X.weight_scale_inv
              F32 per 128 x 128 tile, a multiplier: value = P * S
  ct-nvfp4/   compressed-tensors nvfp4-pack-quantized: X.weight_packed,
              X.weight_scale F8_E4M3, X.weight_global_scale F32 [1], a
              divisor: value = P * (S / G)
  sharded/    a model over two safetensors shards and its index, and
              whole.safetensors, the same tensors in one file

with, for each quantised one, expect/NAME.safetensors: the float32 values
its tensors were made from, which decoding must give bit for bit; and the
same checkpoints written wrongly, as the bugs that make a model write
fluent nonsense do: NAME-swapped/ (the nibbles of each byte swapped),
NAME-inverted/ (the scales inverted).  The values are smooth along rows
(neighbours correlate, as fpcheck's nibble-order test needs) and of the
size trained weights have.  NumPy only; writes beside itself.
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)


def e4m3_values():
    """The float32 value of every E4M3 byte (NaN for 0x7f and 0xff)."""
    v = np.zeros(256, dtype=np.float32)
    for b in range(256):
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        if e == 15 and m == 7:
            v[b] = np.nan
        elif e == 0:
            v[b] = (m / 8) * 2.0 ** -6
        else:
            v[b] = (1 + m / 8) * 2.0 ** (e - 7)
        if s:
            v[b] = -v[b]
    return v


E4M3 = e4m3_values()


def nearest_even(x, grid):
    """The index into GRID (ascending, nonnegative) nearest |x|, ties to the
    even index, saturating at the last."""
    a = np.abs(x)[..., None]
    d = np.abs(a - grid)
    best = d.min(axis=-1, keepdims=True)
    cand = d == best
    idx = np.argmax(cand & (np.arange(len(grid)) % 2 == 0), axis=-1)
    odd_only = ~(cand & (np.arange(len(grid)) % 2 == 0)).any(axis=-1)
    idx = np.where(odd_only, np.argmax(cand, axis=-1), idx)
    return idx


def e2m1_codes(x):
    i = nearest_even(x, E2M1)
    return (i | ((np.signbit(x)) << 3)).astype(np.uint8)


def e4m3_code(x):
    """Positive X to the nearest E4M3 byte, ties to even, saturating."""
    pos = E4M3[:127]
    return nearest_even(np.asarray(x, dtype=np.float32), pos).astype(np.uint8)


def e4m3_codes_signed(x):
    i = nearest_even(x, E4M3[:127])
    return (i | ((np.signbit(x)) << 7)).astype(np.uint8)


def weights(rows, cols, seed):
    """Smooth rows of the size of trained weights, deterministic."""
    r = np.arange(rows, dtype=np.float64)[:, None]
    c = np.arange(cols, dtype=np.float64)[None, :]
    w = 0.02 * (np.sin(0.21 * c + 0.7 * r + seed) + 0.4 * np.sin(0.05 * c * (1 + seed % 3) + r)
                + 0.2 * np.cos(0.013 * c * r + seed))
    return w.astype(np.float32)


def pack(codes, swap=False):
    lo, hi = codes[..., 0::2], codes[..., 1::2]
    if swap:
        lo, hi = hi, lo
    return (lo | (hi << 4)).astype(np.uint8)


DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8", np.dtype(np.int64): "I64",
          np.dtype(np.float16): "F16"}


def write_st(path, tensors, metadata=None):
    """A safetensors file of TENSORS [(name, array, dtype or None)]."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, a, dtype in tensors:
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dtype or DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def mxfp4(name, w):
    """gpt-oss: per 32 elements k = floor(log2 amax) - 2 (E2M1's emax), the
    elements W / 2^k rounded to E2M1."""
    rows, cols = w.shape
    g = w.reshape(rows, cols // 32, 32)
    amax = np.abs(g).max(axis=-1)
    k = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1))) - 2, -127)
    codes = e2m1_codes(g / np.exp2(k)[..., None])
    value = (E2M1[codes & 7] * np.where(codes & 8, -1, 1)).astype(np.float32)
    expect = (value * np.exp2(k)[..., None].astype(np.float32)).reshape(rows, cols)
    scales = (k + 127).astype(np.uint8)
    return codes.reshape(rows, cols // 2 * 2), scales, expect


def write_mxfp4(root):
    parts = {"model.layers.0.mlp.experts.gate_up_proj": weights(64, 128, 1),
             "model.layers.0.mlp.experts.down_proj": weights(32, 64, 2)}
    good, swapped, inverted, expect = [], [], [], []
    for name, w in parts.items():
        codes, scales, e = mxfp4(name, w)
        blocks = pack(codes).reshape(w.shape[0], w.shape[1] // 32, 16)
        blocks_sw = pack(codes, swap=True).reshape(blocks.shape)
        good += [(name + "_blocks", blocks, None), (name + "_scales", scales, None)]
        swapped += [(name + "_blocks", blocks_sw, None), (name + "_scales", scales, None)]
        inverted += [(name + "_blocks", blocks, None),
                     (name + "_scales", (254 - scales.astype(np.int32)).astype(np.uint8), None)]
        expect.append((name, e, None))
    bias = ("model.layers.0.mlp.experts.gate_up_proj_bias", weights(1, 128, 3)[0], None)
    config = {"quantization_config": {"quant_method": "mxfp4",
                                      "modules_to_not_convert": ["model.layers.*.self_attn"]}}
    for sub, t in (("mxfp4", good), ("mxfp4-swapped", swapped), ("mxfp4-inverted", inverted)):
        write_st(os.path.join(root, sub, "model.safetensors"), t + [bias])
        write_json(os.path.join(root, sub, "config.json"), config)
    write_st(os.path.join(root, "expect", "mxfp4.safetensors"), expect + [bias])


def nvfp4(w):
    """ModelOpt: S2 = amax / (6 * 448); per 16 elements S = E4M3((amax_b /
    6) / S2), 1 for a block of zeros; the elements W / (S * S2) to E2M1."""
    rows, cols = w.shape
    s2 = np.float32(np.abs(w).max() / np.float32(6 * 448))
    g = w.reshape(rows, cols // 16, 16)
    bamax = np.abs(g).max(axis=-1)
    bs = np.where(bamax > 0, (bamax / np.float32(6)) / s2, np.float32(1)).astype(np.float32)
    sc = e4m3_code(bs)
    d = (E4M3[sc] * s2).astype(np.float32)
    codes = e2m1_codes(g / d[..., None])
    value = (E2M1[codes & 7] * np.where(codes & 8, -1, 1)).astype(np.float32)
    expect = (value * d[..., None]).astype(np.float32).reshape(rows, cols)
    return codes.reshape(rows, cols), sc, s2, expect


def write_nvfp4(root):
    good, swapped, inverted, expect = [], [], [], []
    for i, name in enumerate(["model.layers.0.mlp.up_proj", "model.layers.0.self_attn.o_proj"]):
        w = weights(48 + 16 * i, 64, 4 + i)
        codes, sc, s2, e = nvfp4(w)
        common = [(name + ".weight_scale", sc, "F8_E4M3"), (name + ".input_scale",
                                                              np.float32(0.5).reshape(()), None)]
        good += [(name + ".weight", pack(codes), None),
                 (name + ".weight_scale_2", s2.reshape(()), None)] + common
        swapped += [(name + ".weight", pack(codes, True), None),
                    (name + ".weight_scale_2", s2.reshape(()), None)] + common
        inverted += [(name + ".weight", pack(codes), None),
                     (name + ".weight_scale_2", (np.float32(1) / s2).reshape(()), None)] + common
        expect.append((name + ".weight", e, None))
    norm = ("model.layers.0.input_layernorm.weight", np.ones(64, dtype=np.float32), None)
    config = {"producer": {"name": "modelopt"},
              "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                               "exclude_modules": ["lm_head"]}}
    for sub, t in (("nvfp4", good), ("nvfp4-swapped", swapped), ("nvfp4-inverted", inverted)):
        write_st(os.path.join(root, sub, "model.safetensors"), t + [norm])
        write_json(os.path.join(root, sub, "hf_quant_config.json"), config)
    write_st(os.path.join(root, "expect", "nvfp4.safetensors"), expect + [norm])


def write_fp8(root):
    """DeepSeek-V3: per 128 x 128 tile S = amax / 448, the elements W / S to
    E4M3; weight_scale_inv holds S, by which the codes are multiplied."""
    good, inverted, expect = [], [], []
    for i, name in enumerate(["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj"]):
        w = weights(200 + 56 * i, 160, 6 + i)
        rows, cols = w.shape
        tr, tc = -(-rows // 128), -(-cols // 128)
        s = np.zeros((tr, tc), dtype=np.float32)
        codes = np.zeros_like(w, dtype=np.uint8)
        e = np.zeros_like(w)
        for a in range(tr):
            for b in range(tc):
                t = w[128 * a:128 * a + 128, 128 * b:128 * b + 128]
                s[a, b] = np.float32(np.abs(t).max() / np.float32(448))
                c = e4m3_codes_signed(t / s[a, b])
                codes[128 * a:128 * a + 128, 128 * b:128 * b + 128] = c
                e[128 * a:128 * a + 128, 128 * b:128 * b + 128] = (E4M3[c] * s[a, b]).astype(
                    np.float32)
        good += [(name + ".weight", codes, "F8_E4M3"), (name + ".weight_scale_inv", s, None)]
        inverted += [(name + ".weight", codes, "F8_E4M3"),
                     (name + ".weight_scale_inv", (np.float32(1) / s).astype(np.float32), None)]
        expect.append((name + ".weight", e, None))
    config = {"quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                      "weight_block_size": [128, 128],
                                      "activation_scheme": "dynamic"}}
    for sub, t in (("fp8", good), ("fp8-inverted", inverted)):
        write_st(os.path.join(root, sub, "model.safetensors"), t)
        write_json(os.path.join(root, sub, "config.json"), config)
    write_st(os.path.join(root, "expect", "fp8.safetensors"), expect)


def write_ct_nvfp4(root):
    """compressed-tensors: G = 448 * 6 / amax (an encoding scale); per 16
    elements S = E4M3(amax_b / 6 * G); values decode as P * (S / G)."""
    name = "model.layers.0.mlp.down_proj"
    w = weights(32, 96, 9)
    rows, cols = w.shape
    gs = np.float32(np.float32(448 * 6) / np.abs(w).max())
    g = w.reshape(rows, cols // 16, 16)
    sc = e4m3_code((np.abs(g).max(axis=-1) / np.float32(6) * gs).astype(np.float32))
    d = (E4M3[sc] / gs).astype(np.float32)
    codes = e2m1_codes(g / d[..., None])
    value = (E2M1[codes & 7] * np.where(codes & 8, -1, 1)).astype(np.float32)
    e = (value * d[..., None]).astype(np.float32).reshape(rows, cols)
    t = [(name + ".weight_packed", pack(codes.reshape(rows, cols)), None),
         (name + ".weight_scale", sc, "F8_E4M3"),
         (name + ".weight_global_scale", gs.reshape(1), None)]
    write_st(os.path.join(root, "ct-nvfp4", "model.safetensors"), t)
    write_json(os.path.join(root, "ct-nvfp4", "config.json"),
               {"quantization_config": {"quant_method": "compressed-tensors",
                                        "format": "nvfp4-pack-quantized"}})
    write_st(os.path.join(root, "expect", "ct-nvfp4.safetensors"), [(name + ".weight", e, None)])


def write_sharded(root):
    """A model over two shards, its index in huggingface_hub's layout, and
    the same tensors in one file in the index's order."""
    t = [("model.embed_tokens.weight", weights(16, 32, 10), None),
         ("model.layers.0.self_attn.q_proj.weight", weights(32, 32, 11), None),
         ("model.layers.0.mlp.up_proj.weight", weights(64, 32, 12), None),
         ("model.norm.weight", np.ones(32, dtype=np.float32), None),
         ("lm_head.weight", weights(16, 32, 13).astype(np.float16), None)]
    shards = {"model-00001-of-00002.safetensors": [t[0], t[2]],
              "model-00002-of-00002.safetensors": [t[4], t[1], t[3]]}
    weight_map = {}
    for f, ts in shards.items():
        write_st(os.path.join(root, "sharded", f), ts, {"format": "pt"})
        for name, _, _ in ts:
            weight_map[name] = f
    order = [name for name, _, _ in t]
    size = sum(a.nbytes for _, a, _ in t)
    write_json(os.path.join(root, "sharded", "model.safetensors.index.json"),
               {"metadata": {"total_size": size},
                "weight_map": {k: weight_map[k] for k in order}})
    write_st(os.path.join(root, "whole.safetensors"), t)


def main():
    write_mxfp4(HERE)
    write_nvfp4(HERE)
    write_fp8(HERE)
    write_ct_nvfp4(HERE)
    write_sharded(HERE)


if __name__ == "__main__":
    main()
