#!/bin/sh
# tools/dumper/fpkit_dump.py and the sample dump in tests/data/sample, read back by
# a reader of its own (python3's json and struct, not the safetensors
# package and not fpkit): the layout of fpkit-dumps(5), the values' mutual
# consistency, and that fpgrad reads every tensor.
#
# The sample is checked wherever python3 runs.  The dumper is run (a tiny
# model trained for a few steps) with the first of $FPK_TORCH_PYTHON, python3
# and /usr/bin/python3 that imports torch; without one the test reports
# itself skipped (exit 77) after the sample checks, or fails if any of them
# failed.
# make check runs it from the build directory with srcdir set; FPGRAD names
# the fpgrad binary (default bin/fpgrad, skipped if absent).
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPGRAD=${FPGRAD:-${top_builddir:-.}/bin/fpgrad}
sample=$srcdir/tests/data/sample
dumper=$srcdir/tools/dumper/fpkit_dump.py
tool=dumper
. "$srcdir/tests/toolcheck.sh"
# Importing tools/dumper/fpkit_dump.py must leave no __pycache__ in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

python=
torch_python=
for p in ${FPK_TORCH_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import json, struct' 2>/dev/null; then
        [ -n "$python" ] || python=$p
        if [ -z "$torch_python" ] && "$p" -c 'import torch' 2>/dev/null; then
            torch_python=$p
        fi
    fi
done
if [ -z "$python" ]; then
    echo "check_dumper: skipped: no python3"
    exit 77
fi

# The reader and the checks.  Each check prints "ok WHAT" or "FAIL WHAT:
# why"; the shell counts them.
cat >"$tmp/dumpcheck.py" <<'EOF'
"""dumpcheck.py CHECK ARGS...: checks of fpkit dumps by an independent reader."""
import json
import math
import os
import re
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}
results = []


def check(cond, what, why=""):
    results.append((bool(cond), what, why))
    return bool(cond)


def bf16(u):
    return struct.unpack("<f", struct.pack("<I", u << 16))[0]


def e4m3(u):
    s, e, m = u >> 7, (u >> 3) & 15, u & 7
    if e == 15 and m == 7:
        return math.nan
    v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -v if s else v


def e5m2(u):
    return struct.unpack("<e", struct.pack("<H", u << 8))[0]


def values(dtype, raw):
    n = len(raw) // SIZES[dtype]
    if dtype in ("F64", "F32", "F16"):
        return list(struct.unpack("<%d%s" % (n, {"F64": "d", "F32": "f", "F16": "e"}[dtype]), raw))
    if dtype == "BF16":
        return [bf16(u) for u in struct.unpack("<%dH" % n, raw)]
    return [(e4m3 if dtype == "F8_E4M3" else e5m2)(u) for u in raw]


def read(path):
    """(metadata, [(name, dtype, shape, values)] in file order, header length):
    every layout rule of fpkit-dumps(5) is checked on the way."""
    data = open(path, "rb").read()
    base = os.path.basename(path)
    n = struct.unpack("<Q", data[:8])[0]
    check(n % 8 == 0 and 8 + n <= len(data), base + ": header length",
          "%d in a %d-byte file" % (n, len(data)))
    text = data[8:8 + n]
    header = json.loads(text)  # refuses what is not JSON
    check(isinstance(header, dict) and text.startswith(b"{"),
          base + ": header is an object with '{' at byte 8")
    meta = header.pop("__metadata__", None)
    check(isinstance(meta, dict) and all(isinstance(k, str) and isinstance(v, str)
                                         for k, v in meta.items()),
          base + ": __metadata__ maps strings to strings", repr(meta))
    tensors, end = [], 0
    for name, t in header.items():
        what = "%s: %s" % (base, name)
        dtype, shape, (b, e) = t["dtype"], t["shape"], t["data_offsets"]
        check(sorted(t) == ["data_offsets", "dtype", "shape"], what + ": fields", repr(sorted(t)))
        check(dtype in SIZES, what + ": dtype", dtype)
        check(all(isinstance(d, int) and d >= 0 for d in shape), what + ": shape", repr(shape))
        size = SIZES.get(dtype, 1)
        check(b == end and e - b == math.prod(shape) * size and b % size == 0,
              what + ": data_offsets follow, hold shape x itemsize, aligned",
              "[%d, %d] after %d for %s x %d" % (b, e, end, shape, size))
        end = e
        tensors.append((name, dtype, shape, values(dtype, data[8 + n + b:8 + n + e])))
    check(8 + n + end == len(data), base + ": the data end the file",
          "data end at %d, file is %d bytes" % (8 + n + end, len(data)))
    return meta, tensors, n


def layout(path, loss_scale):
    """One dumper file: names, metadata, shapes of grad/weight/update alike."""
    base = os.path.basename(path)
    meta, tensors, _ = read(path)
    m = re.fullmatch(r"step-(\d{6,})\.safetensors", base)
    check(m, base + ": file name step-NNNNNN.safetensors")
    check(m and meta.get("step") == str(int(m.group(1))), base + ": metadata step", repr(meta))
    try:
        loss = float(meta.get("loss"))
    except (TypeError, ValueError):
        loss = math.nan
    check(math.isfinite(loss) and loss > 0, base + ": metadata loss", repr(meta.get("loss")))
    check(meta.get("loss_scale") == loss_scale, base + ": metadata loss_scale",
          "%r, expected %r" % (meta.get("loss_scale"), loss_scale))
    check(meta.get("fpkit_dump") == "1" and "torch" in meta, base + ": metadata fpkit_dump, torch")
    names = {t[0]: t for t in tensors}
    check(all(re.fullmatch(r"(grad|weight|update|actgrad)/.+", t[0]) for t in tensors),
          base + ": every name is grad/, weight/, update/ or actgrad/", repr(list(names)))
    params = [t[0][5:] for t in tensors if t[0].startswith("grad/")]
    check(params and all(names.get(k + "/" + p, (0, 0, None))[2] == names["grad/" + p][2]
                         for p in params for k in ("weight", "update")),
          base + ": every grad/P has weight/P and update/P of its shape")
    finite = all(math.isfinite(x) for t in tensors for x in t[3])
    check(finite, base + ": every value finite")
    return meta, names


def sample(directory):
    files = sorted(f for f in os.listdir(directory) if f.endswith(".safetensors"))
    check(files == ["step-000000.safetensors", "step-000050.safetensors",
                    "step-000300.safetensors", "step-000919.safetensors"],
          "sample: the four steps", repr(files))
    total = sum(os.path.getsize(os.path.join(directory, f)) for f in files)
    check(total < 4 << 20, "sample: under 4 MB", "%d bytes" % total)
    params = ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
              "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    layers = {"conv1": [32, 4, 8, 8], "relu1": [32, 4, 8, 8], "conv2": [32, 8, 8, 8],
              "relu2": [32, 8, 8, 8], "pool": [32, 8, 4, 4], "fc1": [32, 32],
              "relu3": [32, 32], "fc2": [32, 10]}
    want = (["%s/%s" % (k, p) for k in ("grad", "weight", "update") for p in params]
            + ["actgrad/" + layer for layer in layers])
    vanish = []  # per file: the fraction of nonzero actgrads fp16 rounds to zero
    for f in files:
        meta, names = layout(os.path.join(directory, f), "1")
        check(list(names) == want, f + ": the tensors, in order", repr(list(names)))
        check(all(names[k][1] == "F32" for k in names), f + ": all F32")
        check(all(names["actgrad/" + layer][2] == s for layer, s in layers.items()),
              f + ": activation gradient shapes")
        nonzero = [abs(x) for k in names if k.startswith("actgrad/") for x in names[k][3] if x]
        vanish.append(sum(1 for x in nonzero if x <= 2.0 ** -25) / len(nonzero))
    # Training leaves the late activation gradients far smaller: most of them
    # vanish in fp16, few of the first step's do.
    check(vanish[0] < 0.01 and vanish[-1] > 0.5, "sample: fp16 underflow grows from step 0 to 919",
          "%.3f -> %.3f" % (vanish[0], vanish[-1]))


def demo(d1, d2, d3):
    """--demo runs: d1 4 steps, d2 the same with --loss-scale 1024, d3 5
    steps --every 2."""
    files = sorted(os.listdir(d1))
    check(files == ["step-%06d.safetensors" % s for s in range(4)],
          "demo: four files and no temporary ones", repr(files))
    check(sorted(os.listdir(d3)) == ["step-%06d.safetensors" % s for s in (0, 2, 4)],
          "demo --every 2: steps 0, 2, 4", repr(sorted(os.listdir(d3))))
    params = ["conv.weight", "conv.bias", "fc.weight", "fc.bias"]
    layers = {"conv": [8, 4, 8, 8], "relu": [8, 4, 8, 8], "pool": [8, 4, 4, 4],
              "flat": [8, 64], "fc": [8, 10]}
    want = (["%s/%s" % (k, p) for k in ("grad", "weight", "update") for p in params]
            + ["actgrad/" + layer for layer in layers])
    runs = {}
    for d, scale in ((d1, "1"), (d2, "1024"), (d3, "1")):
        for f in sorted(os.listdir(d)):
            meta, names = layout(os.path.join(d, f), scale)
            check(list(names) == want, "%s/%s: the tensors, in order" % (d, f), repr(list(names)))
            check(all(names["actgrad/" + layer][2] == s for layer, s in layers.items()),
                  "%s/%s: activation gradient shapes" % (d, f))
            runs[d, int(meta["step"])] = (meta, names)
    lr = 2.0 ** -4
    for s in range(3):
        _, a = runs[d1, s]
        _, b = runs[d1, s + 1]
        for p in params:
            w0, w1, u, g = (a["weight/" + p][3], b["weight/" + p][3], a["update/" + p][3],
                            a["grad/" + p][3])
            exact = [struct.unpack("<f", struct.pack("<f", y - x))[0] for x, y in zip(w0, w1)]
            check(u == exact, "step %d %s: update == weight after - weight before" % (s, p))
            worst = max(abs(ui + lr * gi) / (2.0 ** -23 * (abs(y) + abs(ui)) + 2.0 ** -149)
                        for ui, gi, y in zip(u, g, w1))
            check(worst <= 1, "step %d %s: SGD update == -lr * grad within rounding" % (s, p),
                  "off by %g of the bound" % worst)
    for s in range(4):
        m1, a = runs[d1, s]
        m2, b = runs[d2, s]
        check(m1["loss"] == m2["loss"], "step %d: the loss scale leaves the loss" % s)
        same = all(a[k][3] == b[k][3] for k in a if not k.startswith("actgrad/"))
        check(same, "step %d: loss scale 1024 leaves grad, weight, update as they were" % s)
        scaled = all([1024 * x for x in a[k][3]] == b[k][3] for k in a if k.startswith("actgrad/"))
        check(scaled, "step %d: with loss scale 1024 the activation gradients are 1024x" % s)


def api(tools):
    """write_safetensors on every dtype torch has, an empty and a 0-d tensor."""
    sys.path.insert(0, tools)
    import torch
    import fpkit_dump
    path = os.path.join(os.environ["TMPDIR_CHECK"], "api.safetensors")
    vals = [0.0, -0.0, 1.0, -2.5, 2.0 ** -14, 2.0 ** -24, 65504.0, 0.15625]
    tensors = [("h", torch.tensor(vals, dtype=torch.float16)),
               ("b", torch.tensor(vals, dtype=torch.bfloat16).reshape(2, 4)),
               ("d", torch.tensor(vals, dtype=torch.float64)[::2]),
               ("f", torch.tensor(vals, dtype=torch.float32).reshape(2, 2, 2).transpose(0, 2)),
               ("empty", torch.zeros(0, 3)), ("scalar", torch.tensor(3.5, dtype=torch.float64))]
    extra = [("e4", "float8_e4m3fn", "F8_E4M3"), ("e5", "float8_e5m2", "F8_E5M2")]
    for name, attr, _ in extra:
        if hasattr(torch, attr):
            tensors.append((name, torch.tensor([0.0, 1.0, -448.0 if name == "e4" else -57344.0,
                                                2.0 ** -9 if name == "e4" else 2.0 ** -16],
                                               dtype=getattr(torch, attr))))
    fpkit_dump.write_safetensors(path, tensors, {"k": "v"})
    meta, got, _ = read(path)
    check(meta == {"k": "v"}, "api: metadata", repr(meta))
    by = {t[0]: t for t in got}
    dt = {"h": "F16", "b": "BF16", "d": "F64", "f": "F32", "empty": "F32", "scalar": "F64"}
    dt.update({n: st for n, a, st in extra if hasattr(torch, a)})
    check({k: by[k][1] for k in by} == dt, "api: dtypes", repr({k: by[k][1] for k in by}))
    widths = [SIZES[t[1]] for t in got]
    check(widths == sorted(widths, reverse=True), "api: widest dtype first", repr(widths))
    for name, t in tensors:
        want = [float(x) for x in t.to(torch.float64).reshape(-1).tolist()]
        check(by[name][2] == list(t.shape) and by[name][3] == want,
              "api: %s round-trips" % name, "%r %r" % (by[name][2], by[name][3]))
    for bad, why in (([("x", torch.zeros(1)), ("x", torch.zeros(1))], "a repeated name"),
                     ([("__metadata__", torch.zeros(1))], "the name __metadata__"),
                     ([("i", torch.zeros(2, dtype=torch.int32))], "an integer tensor")):
        try:
            fpkit_dump.write_safetensors(path + ".bad", bad)
            check(False, "api: refuses " + why)
        except (TypeError, ValueError):
            check(not os.path.exists(path + ".bad"), "api: refuses " + why)
    try:
        fpkit_dump.write_safetensors(path + ".bad", [("x", torch.zeros(1))], {"step": 1})
        check(False, "api: refuses metadata that is not a string")
    except TypeError:
        check(True, "api: refuses metadata that is not a string")
    left = [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".tmp")]
    check(not left, "api: no temporary file left", repr(left))

    # A layer called twice a step, steps numbered 10, 20, 30 (begin_step),
    # every 20th recorded, no updates: the file is written by before_step.
    class Twice(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(torch.tanh(self.lin(x)))

    torch.manual_seed(1)
    model = Twice()
    out = os.path.join(os.environ["TMPDIR_CHECK"], "twice")
    dumper = fpkit_dump.FpkitDumper(model, out, every=20, updates=False)
    for step in (10, 20, 30):
        dumper.begin_step(step)
        model(torch.randn(2, 3)).sum().backward()
        dumper.before_step(step, 0.5, loss_scale=8)
    dumper.close()
    check(os.listdir(out) == ["step-000020.safetensors"], "api: begin_step, every 20",
          repr(os.listdir(out)))
    meta, got, _ = read(os.path.join(out, "step-000020.safetensors"))
    check([t[0] for t in got] == ["grad/lin.weight", "grad/lin.bias", "weight/lin.weight",
                                  "weight/lin.bias", "actgrad/lin", "actgrad/lin@1"],
          "api: a layer called twice gives L and L@1", repr([t[0] for t in got]))
    check(meta["loss"] == "0.5" and meta["loss_scale"] == "8", "api: loss and loss_scale text",
          repr(meta))
    check(not model.lin._backward_hooks and not getattr(model.lin, "_backward_pre_hooks", None),
          "api: close() removes the hooks")


def fpgrad(jsonfile, *dirs):
    """fpgrad --json read every tensor of DIRS, with the element counts and
    zeros this reader finds."""
    doc = json.load(open(jsonfile))
    got = {(os.path.basename(t["file"]), t["name"]): (t["count"], t["zeros"])
           for t in doc["tensors"]}
    want = {}
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.endswith(".safetensors"):
                for name, _, shape, v in read(os.path.join(d, f))[1]:
                    want[f, name] = (math.prod(shape), sum(1 for x in v if x == 0))
    check(got == want, "fpgrad: %d tensors, their counts and zeros" % len(want),
          "%d tensors, %d differ" % (len(got), sum(1 for k in want if got.get(k) != want[k])))


try:
    globals()[sys.argv[1]](*sys.argv[2:])
except Exception as e:  # a file the reader cannot follow fails the test
    import traceback
    traceback.print_exc()
    check(False, sys.argv[1], "%s: %s" % (type(e).__name__, e))
for good, what, why in results:
    print("ok " + what if good else "FAIL %s: %s" % (what, why))
EOF

# count LABEL PYTHON CHECK ARGS...: counts the checks' results.
count() {
    label=$1
    py=$2
    shift 2
    TMPDIR_CHECK=$tmp "$py" "$tmp/dumpcheck.py" "$@" >"$tmp/$label.out" 2>"$tmp/$label.err" || true
    n_ok=$(grep -c '^ok ' "$tmp/$label.out" || true)
    n_bad=$(grep -c '^FAIL ' "$tmp/$label.out" || true)
    pass=$((pass + n_ok))
    fail=$((fail + n_bad))
    grep '^FAIL ' "$tmp/$label.out" | head -n 10 || true
    if [ "$n_ok" -eq 0 ] && [ "$n_bad" -eq 0 ]; then
        bad "$label: no result: $(tail -n 3 "$tmp/$label.err")"
    elif [ -s "$tmp/$label.err" ]; then
        head -n 20 "$tmp/$label.err"
    fi
}

count sample "$python" sample "$sample"
have_fpgrad=no
if [ -x "$FPGRAD" ]; then
    have_fpgrad=yes
    if "$FPGRAD" --quiet --json "$tmp/sample.json" "$sample" >/dev/null 2>"$tmp/fpgrad.err"; then
        count fpgrad-sample "$python" fpgrad "$tmp/sample.json" "$sample"
    else
        bad "fpgrad --json on $sample: $(head -n 3 "$tmp/fpgrad.err")"
    fi
fi

if [ -z "$torch_python" ]; then
    echo "check_dumper: the sample: $pass passed, $fail failed; the dumper is not run: no python3 imports torch"
    [ "$fail" -eq 0 ] || exit 1
    exit 77
fi

# demo DIR ARGS...: the dumper's demo into DIR, printing the files it wrote.
demo() {
    dir=$1
    shift
    if "$torch_python" "$dumper" --demo "$dir" "$@" >"$tmp/demo.out" 2>"$tmp/demo.err" &&
        [ ! -s "$tmp/demo.err" ]; then
        ok
    else
        bad "fpkit_dump.py --demo $dir $*: $(tail -n 5 "$tmp/demo.err")"
    fi
}
demo "$tmp/d1" --steps 4
demo "$tmp/d2" --steps 4 --loss-scale 1024
demo "$tmp/d3" --steps 5 --every 2
# Bad option values: a usage error (status 2) naming the option, no traceback.
for bad_opt in "--every 0" "--steps -1" "--loss-scale 0" "--loss-scale nan" "--every x"; do
    rc=0
    # shellcheck disable=SC2086 # an option and its value
    "$torch_python" "$dumper" --demo "$tmp/bad" $bad_opt >/dev/null 2>"$tmp/bad.err" || rc=$?
    if [ "$rc" -eq 2 ] && grep -q "argument ${bad_opt% *}: " "$tmp/bad.err" &&
        ! grep -q Traceback "$tmp/bad.err" && [ ! -e "$tmp/bad" ]; then
        ok
    else
        bad "fpkit_dump.py --demo $bad_opt: exit $rc: $(tail -n 2 "$tmp/bad.err")"
    fi
done
count demo "$torch_python" demo "$tmp/d1" "$tmp/d2" "$tmp/d3"
count api "$torch_python" api "$srcdir/tools/dumper"
if [ "$have_fpgrad" = yes ]; then
    if "$FPGRAD" --quiet --json "$tmp/demo.json" "$tmp/d1" "$tmp/d3" >/dev/null 2>"$tmp/fpgrad.err"; then
        count fpgrad-demo "$python" fpgrad "$tmp/demo.json" "$tmp/d1" "$tmp/d3"
    else
        bad "fpgrad --json on the demo dumps: $(head -n 3 "$tmp/fpgrad.err")"
    fi
fi

summary
