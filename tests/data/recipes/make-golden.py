#!/usr/bin/env python3
"""Writes tests/data/recipes/golden.bin: torchao's quantisation of random
and real tensors for every case of refs.py, which tests/check_recipe
compares fpkit's recipes with bit for bit wherever torchao is absent.

    TORCHAO_SRC=/path/to/torchao-checkout python3 make-golden.py [OUT]

(refs.py says what TORCHAO_SRC adds.)  The file, little-endian: "FPKR1\\n",
then per case: u32 length and the recipe's text, u32 length and the
reference's name, u32 rows, u32 cols, u32 global (float32 bits), u32 1 if
values follow; x as float32, codes as bytes, the scales as u32, and the
values as float32 if present.
"""
import os
import struct
import sys

import numpy as np
import torch

import refs

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "golden.bin")
    sample = os.path.join(HERE, "..", "sample")
    have_te = bool(os.environ.get("TORCHAO_SRC"))
    with open(out, "wb") as f:
        f.write(b"FPKR1\n")
        for k, (recipe, refname, ref, needs_te, bf16) in enumerate(refs.CASES):
            if needs_te and not have_te:
                print(f"{recipe}: skipped (TORCHAO_SRC not set)")
                continue
            for label, x in refs.inputs(recipe, 1000 + k, sample, bf16):
                rows, cols = x.shape
                codes, scales, glob, y = ref(x.contiguous())
                if label != "random":
                    y = None  # values of one input per case keep the file small
                name = f"{refname} ({label})".encode()
                r = recipe.encode()
                f.write(struct.pack("<I", len(r)) + r + struct.pack("<I", len(name)) + name)
                f.write(struct.pack("<IIII", rows, cols, glob, y is not None))
                f.write(x.numpy().astype("<f4").tobytes())
                f.write(np.asarray(codes, dtype=np.uint8).tobytes())
                f.write(np.asarray(scales, dtype="<u4").tobytes())
                if y is not None:
                    f.write(np.asarray(y, dtype="<f4").tobytes())
                print(f"{recipe}: {label} {rows}x{cols}, {len(scales)} scales")
    print("torch", torch.__version__, "torchao", refs.mx_tensor.__name__)


if __name__ == "__main__":
    main()
