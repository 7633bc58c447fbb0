"""fpkit's recipes against torchao's quantisers, live (tests/data/recipes/
refs.py names each case's reference function): random tensors of several
seeds and shapes and the bundled sample's gradients, codes, scales, the
global scale and the values compared bit for bit.  Prints a line per case
and "N passed, M failed"; exit 1 on any mismatch."""
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data", "recipes"))
import refs  # noqa: E402


def run(dump, recipe, x):
    rows, cols = x.shape
    out = subprocess.run([dump, recipe, str(rows), str(cols)],
                         input=x.numpy().astype(np.float32).tobytes(),
                         capture_output=True, check=True).stdout
    n = rows * cols
    nb = (len(out) - 5 * n - 4) // 4
    codes = np.frombuffer(out[:n], np.uint8)
    scales = np.frombuffer(out[n:n + 4 * nb], np.uint32)
    glob = int(np.frombuffer(out[n + 4 * nb:n + 4 * nb + 4], np.uint32)[0])
    y = np.frombuffer(out[n + 4 * nb + 4:], np.uint32)
    return codes, scales, glob, y


def main():
    dump = sys.argv[1]
    sample = os.path.join(HERE, "data", "sample")
    have_te = bool(os.environ.get("TORCHAO_SRC"))
    passed = failed = 0
    for k, (recipe, refname, ref, needs_te, bf16) in enumerate(refs.CASES):
        if needs_te and not have_te:
            print(f"{recipe}: skipped: TORCHAO_SRC names no torchao checkout")
            continue
        for seed in range(3):
            for label, x in refs.inputs(recipe, 5000 + 17 * k + seed, sample, bf16):
                if label == "sample" and seed:
                    continue
                codes, scales, glob, y = ref(x.contiguous())
                c2, s2, g2, y2 = run(dump, recipe, x)
                bad = []
                if not np.array_equal(np.asarray(codes, np.uint8), c2):
                    bad.append(f"{int((np.asarray(codes) != c2).sum())} codes")
                if not np.array_equal(np.asarray(scales, np.uint32), s2):
                    bad.append(f"{int((np.asarray(scales) != s2).sum())} scales")
                if glob != g2:
                    bad.append(f"global {glob:08x} != {g2:08x}")
                if y is not None:
                    yb = np.asarray(y, np.float32).view(np.uint32)
                    if not np.array_equal(yb, y2):
                        bad.append(f"{int((yb != y2).sum())} values")
                what = f"{recipe} against {refname}, {label} seed {seed}"
                if bad:
                    failed += 1
                    print(f"{what}: MISMATCH: {', '.join(bad)}")
                else:
                    passed += 1
                    print(f"{what}: {x.numel()} elements identical")
    print(f"torch {torch.__version__}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
