#!/bin/sh
# fpgrad --shards: two tensors split across three rank files (named
# ...rankK... and, again, ...-0000K-of-00003...), reported as one row each,
# must give what the unsplit tensors in one file give, --scale auto and SR
# included (eleven shards too, rank10 after rank9): every count, histogram,
# amax and scale exactly, the SQNR to 1e-12 (the shards' error sums are
# added in order), in the rows and in the total; the MX formats too, on
# shards of whole blocks.
# Partials of the shards merged with --shards give the same JSON, byte for
# byte.  Shards of one tensor in two dtypes are refused.  Skipped (77)
# where neither python3 nor /usr/bin/python3 imports numpy.
#
# make check runs it from the build directory with srcdir set.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"
need_python
need_modules 'numpy'

"$py" - "$tmp" <<'EOF'
import json, os, struct, sys
import numpy as np

def safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, dtype, x in tensors:
        b = x.astype(dtype).tobytes()
        header[name] = {"dtype": {"<f4": "F32", "<f2": "F16"}[dtype], "shape": list(x.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

tmp = sys.argv[1]
rng = np.random.default_rng(3)
a = rng.standard_normal(30000) * 10.0 ** rng.uniform(-9, 4, 30000)
a[::5] = 0
a[7] = np.inf
b = rng.standard_normal(999) * 1e-6
for d in ("rank", "of", "mixed", "many"):
    os.makedirs(os.path.join(tmp, d))
# eleven shards: rank10 comes after rank9, not after rank1
for k, pa in enumerate(np.array_split(a, 11)):
    safetensors(os.path.join(tmp, "many", "grads-rank%d.safetensors" % k), [("a", "<f4", pa)])
for k, (pa, pb) in enumerate(zip(np.array_split(a, 3), np.array_split(b, 3))):
    safetensors(os.path.join(tmp, "rank", "grads-rank%d.safetensors" % k),
                [("a", "<f4", pa), ("b", "<f4", pb)])
    safetensors(os.path.join(tmp, "of", "grads-%05d-of-00003.safetensors" % k),
                [("a", "<f4", pa), ("b", "<f4", pb)])
    safetensors(os.path.join(tmp, "mixed", "grads-rank%d.safetensors" % k),
                [("a", "<f2" if k == 2 else "<f4", pa)])
safetensors(os.path.join(tmp, "whole.safetensors"), [("a", "<f4", a), ("b", "<f4", b)])
safetensors(os.path.join(tmp, "whole-a.safetensors"), [("a", "<f4", a)])
# MX: shards of whole blocks (32 elements), a third of them zeros
c = rng.standard_normal(3 * 1280) * 10.0 ** rng.uniform(-6, 2, 3 * 1280)
c[rng.random(c.size) < 1 / 3] = 0
os.makedirs(os.path.join(tmp, "mx"))
for k, pc in enumerate(np.array_split(c, 3)):
    safetensors(os.path.join(tmp, "mx", "grads-rank%d.safetensors" % k), [("c", "<f4", pc)])
safetensors(os.path.join(tmp, "whole-c.safetensors"), [("c", "<f4", c)])
# two shards of three chunks each (2^18 elements a chunk), for threads
# sharing each shard's one read
g = rng.standard_normal(1200001) * 10.0 ** rng.uniform(-9, 2, 1200001)
g[rng.random(g.size) < 0.3] = 0
os.makedirs(os.path.join(tmp, "big"))
for k, pg in enumerate(np.array_split(g, 2)):
    safetensors(os.path.join(tmp, "big", "grads-rank%d.safetensors" % k), [("g", "<f4", pg)])
safetensors(os.path.join(tmp, "whole-g.safetensors"), [("g", "<f4", g)])
EOF

# same.py SHARDED WHOLE NAMES: the JSON reports agree (the SQNR to 1e-12).
cat >"$tmp/same.py" <<'EOF'
import json, sys
s, w = (json.load(open(p)) for p in sys.argv[1:3])
assert [t["name"] for t in s["tensors"]] == json.loads(sys.argv[3]), s["tensors"]
def same(x, y, skip):
    for k in x:
        if k not in skip + ("formats",):
            assert x[k] == y[k], (x.get("name", "total"), k, x[k], y[k])
    for f in x["formats"]:
        fx, fy = dict(x["formats"][f]), dict(y["formats"][f])
        qx, qy = fx.pop("sqnr_db"), fy.pop("sqnr_db")
        assert fx == fy, (x.get("name", "total"), f, fx, fy)
        assert (qx is None and qy is None) or abs(qx - qy) <= 1e-12 * abs(qy), (qx, qy)
for x, y in zip(s["tensors"], w["tensors"]):
    assert "*" in x["file"], x["file"]
    same(x, y, ("file",))
same(s["total"], w["total"], ("files",))
EOF

# A file without a shard index is a tensor of its own, as without --shards.
good plain --shards --round sr --json - "$tmp/whole.safetensors"
good plain-ref --round sr --json - "$tmp/whole.safetensors"
if cmp -s "$tmp/plain.out" "$tmp/plain-ref.out"; then ok; else bad "--shards changed a file without shards"; fi

# Under SR too: a shard's elements take their counters in the whole tensor.
for mode in rne sr; do
    good "whole-$mode" --round $mode --scale auto --json - "$tmp/whole.safetensors"
    good "whole-a-$mode" --round $mode --scale auto --json - "$tmp/whole-a.safetensors"
    for d in rank of many; do
        whole=whole-$mode names='["a", "b"]'
        if [ $d = many ]; then whole=whole-a-$mode names='["a"]'; fi
        good "$d-$mode" --shards --round $mode --scale auto --json - "$tmp/$d"
        if "$py" "$tmp/same.py" "$tmp/$d-$mode.out" "$tmp/$whole.out" "$names"
        then ok; else bad "$d: --shards --round $mode differs from the unsplit tensors"; fi
    done
done

# The MX formats too, each shard whole blocks: under SR an element's
# counter is its place in the whole tensor, in the blocks as elsewhere.
mx=mxfp4,mxfp6_e2m3,mxfp8,e4m3
for mode in rne sr; do
    good "whole-c-$mode" --round $mode --formats $mx --json - "$tmp/whole-c.safetensors"
    good "mx-$mode" --shards --round $mode --formats $mx --json - "$tmp/mx"
    if "$py" "$tmp/same.py" "$tmp/mx-$mode.out" "$tmp/whole-c-$mode.out" '["c"]'
    then ok; else bad "mx: --shards --round $mode differs from the unsplit tensor"; fi
done

# Shards of several chunks, each read once by 1, 2 or 3 threads (4 and 6
# shared by the 2 shards): under SR the counters of a chunk that a second
# thread reads start at its place in the whole tensor.
good whole-g --round sr --json - "$tmp/whole-g.safetensors"
for n in 1 4 6; do
    good "big$n" --shards --round sr --threads $n --json - "$tmp/big"
    if "$py" "$tmp/same.py" "$tmp/big$n.out" "$tmp/whole-g.out" '["g"]'
    then ok; else bad "big: --shards --round sr --threads $n differs from the unsplit tensor"; fi
done

# Partials of the shards, merged with --shards: the same JSON.
for k in 0 1 2; do
    good "emit$k" --quiet --emit-partial "$tmp/p$k.part" "$tmp/rank/grads-rank$k.safetensors"
done
good direct --shards --json - "$tmp/rank"
good merged --merge --shards --json - "$tmp/p0.part" "$tmp/p1.part" "$tmp/p2.part"
if cmp -s "$tmp/direct.out" "$tmp/merged.out"; then
    ok
else
    bad "--merge --shards differs from --shards on the files"
fi

error mixed 2 'tensor "a" is f32 in .*rank0.safetensors but f16 in .*rank2.safetensors' \
    --shards "$tmp/mixed"

summary
