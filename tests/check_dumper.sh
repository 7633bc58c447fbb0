#!/bin/sh
# tools/dumper/fpkit_dump.py and the sample dump in tests/data/sample, read back by
# a reader of its own (python3's json and struct, not the safetensors
# package and not fpkit): the layout of fpkit-dumps(5), the values' mutual
# consistency, and that fpgrad reads every tensor.
#
# The sample is checked wherever python3 runs.  The dumper is run (a tiny
# model trained for a few steps; rank files without and with
# torch.distributed, two processes of the gloo backend on the loopback
# interface; a GradScaler's, torch.amp's on the CPU where torch has it, else
# a stand-in; the man page's examples) with the first of $FPK_TORCH_PYTHON,
# python3 and /usr/bin/python3 that imports torch; without one the test
# reports itself skipped (exit 77) after the sample checks, or fails if any
# of them failed.  make check runs it from the build directory with srcdir
# set; FPGRAD and FPSCALE name the binaries (default bin/fpgrad and
# bin/fpscale, their checks skipped if absent).
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPGRAD=${FPGRAD:-${top_builddir:-.}/bin/fpgrad}
FPSCALE=${FPSCALE:-${top_builddir:-.}/bin/fpscale}
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


def layout(path, loss_scale, params=True):
    """One dumper file: names, metadata, shapes of grad/weight/update alike;
    PARAMS: whether it holds parameter tensors (a replicated run's rank 0)."""
    base = os.path.basename(path)
    meta, tensors, _ = read(path)
    m = re.fullmatch(r"step-(\d{6,})(-rank(\d{4,})-of-(\d{4,}))?\.safetensors", base)
    check(m and (not m.group(2) or len(m.group(3)) == len(m.group(4))),
          base + ": file name step-NNNNNN[-rankRRRR-of-WWWW].safetensors")
    check(m and meta.get("step") == str(int(m.group(1))), base + ": metadata step", repr(meta))
    ranks = (str(int(m.group(3))), str(int(m.group(4)))) if m and m.group(2) else (None, None)
    check((meta.get("rank"), meta.get("world_size")) == ranks,
          base + ": metadata rank and world_size as in the name", repr(meta))
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
    grads = [t[0][5:] for t in tensors if t[0].startswith("grad/")]
    if params:
        check(grads and all(names.get(k + "/" + p, (0, 0, None))[2] == names["grad/" + p][2]
                            for p in grads for k in ("weight", "update")),
              base + ": every grad/P has weight/P and update/P of its shape")
    else:
        check(tensors and all(t[0].startswith("actgrad/") for t in tensors),
              base + ": actgrad/ alone", repr(list(names)))
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


def ranks(tools):
    """rank= and world_size= without a process group: each rank's file name
    and metadata, the parameters in rank 0's file alone unless
    replicated=False, one process's names unchanged, and the refusals."""
    sys.path.insert(0, tools)
    import torch
    import fpkit_dump
    tmp = os.environ["TMPDIR_CHECK"]

    def run(out, **kw):
        torch.manual_seed(2)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        with fpkit_dump.FpkitDumper(model, out, first_step=7, **kw) as dumper:
            model(torch.randn(5, 3)).square().sum().backward()
            dumper.before_step(7, 1.5)
            opt.step()
            dumper.after_step()
        return sorted(os.listdir(out))

    acts = ["actgrad/0", "actgrad/1", "actgrad/2"]
    full = (["%s/%s" % (k, p) for k in ("grad", "weight", "update")
             for p in ("0.weight", "0.bias", "2.weight", "2.bias")] + acts)
    cases = [({"rank": 0, "world_size": 2}, "step-000007-rank0000-of-0002.safetensors", full),
             ({"rank": 1, "world_size": 2}, "step-000007-rank0001-of-0002.safetensors", acts),
             ({"rank": 1, "world_size": 2, "replicated": False},
              "step-000007-rank0001-of-0002.safetensors", full),
             ({"rank": 12, "world_size": 12345}, "step-000007-rank00012-of-12345.safetensors",
              acts),
             ({"rank": 0, "world_size": 1}, "step-000007.safetensors", full),
             ({}, "step-000007.safetensors", full)]
    for n, (kw, name, want) in enumerate(cases):
        out = os.path.join(tmp, "ranks%d" % n)
        files = run(out, **kw)
        what = "ranks %s" % kw
        check(files == [name], what + ": the file's name", repr(files))
        check(fpkit_dump.step_file_name(7, kw.get("rank", 0), kw.get("world_size", 1)) == name,
              what + ": step_file_name")
        if files == [name]:
            meta, names = layout(os.path.join(out, name), "1", want is full)
            check(list(names) == want, what + ": the tensors", repr(list(names)))
    for kw in ({"rank": 2, "world_size": 2}, {"rank": -1, "world_size": 2}, {"rank": 1},
               {"world_size": 2}, {"rank": True, "world_size": 2},
               {"rank": 0.0, "world_size": 2}, {"rank": 0, "world_size": 0}):
        out = os.path.join(tmp, "ranks-bad")
        try:
            run(out, **kw)
            check(False, "ranks: refuses %s" % kw)
        except ValueError:
            check(not os.path.exists(out), "ranks: refuses %s before making the folder" % kw)


class StandInScaler:
    """torch.amp.GradScaler's interface and behaviour, for a loop without
    inf or NaN, on the CPU for torch releases whose GradScaler needs CUDA
    (before 2.3): the scale grows by GROWTH after every update(), and
    unscale_() and step() mark the optimizer's stage as GradScaler does."""

    def __init__(self, init_scale, growth, enabled=True):
        import enum
        self.stages = enum.Enum("OptState", "READY UNSCALED STEPPED")
        self.value, self.growth, self.enabled = init_scale, growth, enabled
        self._per_optimizer_states = {}

    def is_enabled(self):
        return self.enabled

    def get_scale(self):
        return float(self.value) if self.enabled else 1.0

    def scale(self, loss):
        return loss * self.get_scale()

    def unscale_(self, opt):
        for p in (p for g in opt.param_groups for p in g["params"] if p.grad is not None):
            p.grad.mul_(1.0 / self.get_scale())
        self._per_optimizer_states[id(opt)] = {"stage": self.stages.UNSCALED}

    def step(self, opt):
        if self._per_optimizer_states.get(id(opt), {}).get("stage") != self.stages.UNSCALED:
            self.unscale_(opt)
        opt.step()
        self._per_optimizer_states[id(opt)] = {"stage": self.stages.STEPPED}

    def update(self):
        self.value *= self.growth if self.enabled else 1
        self._per_optimizer_states = {}


def scaler(tools, plain, scaled, unscaled, disabled):
    """A loop with a GradScaler whose scale doubles at every step: the
    loss_scale of each file is the scale of its backward, the parameter and
    activation gradients are the plain loop's times it, exactly, unless
    the loop unscaled them before before_step (grads_scaled says which);
    weights and updates are the plain loop's; a disabled scaler gives 1."""
    sys.path.insert(0, tools)
    import torch
    import fpkit_dump
    real = hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler")
    kind = ("torch.amp.GradScaler" if real
            else "a stand-in GradScaler (torch %s)" % torch.__version__)
    torch.manual_seed(3)
    data = [(torch.randn(6, 5), torch.randint(0, 3, (6,))) for _ in range(4)]

    def run(out, how):
        torch.manual_seed(4)
        model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.25)
        if how == "plain":
            sc = None
        elif real:
            sc = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=1,
                                      enabled=how != "disabled")
        else:
            sc = StandInScaler(2.0 ** 10, 2, enabled=how != "disabled")
        seen = []
        with fpkit_dump.FpkitDumper(model, out, scaler=sc) as dumper:
            for step, (x, y) in enumerate(data):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                if sc is None:
                    loss.backward()
                    dumper.before_step(step, loss)
                    opt.step()
                else:
                    sc.scale(loss).backward()
                    if how == "unscaled":
                        sc.unscale_(opt)
                    seen.append(sc.get_scale())
                    dumper.before_step(step, loss)
                    sc.step(opt)
                    sc.update()
                dumper.after_step()
                opt.zero_grad()
        return seen, model, sc

    _, model, _ = run(plain, "plain")
    runs = {how: run(out, how)[0] for how, out in (("scaled", scaled), ("unscaled", unscaled),
                                                    ("disabled", disabled))}
    check(runs["scaled"] == runs["unscaled"] == [2.0 ** 10, 2.0 ** 11, 2.0 ** 12, 2.0 ** 13]
          and runs["disabled"] == [1.0] * 4,
          "scaler: %s's scale doubles at each step" % kind, repr(runs))
    files = ["step-%06d.safetensors" % s for s in range(4)]
    for how, out, grads_scaled in (("scaled", scaled, "1"), ("unscaled", unscaled, "0"),
                                   ("disabled", disabled, "0")):
        check(sorted(os.listdir(out)) == files, "scaler %s: the files" % how)
        for s, f in enumerate(files):
            scale = runs[how][s]
            _, a = layout(os.path.join(plain, f), "1")
            meta, b = layout(os.path.join(out, f), fpkit_dump._number_text(scale))
            check(meta.get("grads_scaled") == grads_scaled,
                  "scaler %s step %d: grads_scaled" % (how, s), repr(meta))
            check(list(a) == list(b), "scaler %s step %d: the tensors" % (how, s))
            gscale = scale if grads_scaled == "1" else 1
            for k in a:
                want = [x * (gscale if k.startswith("grad/") else
                             scale if k.startswith("actgrad/") else 1) for x in a[k][3]]
                check(b.get(k, (0, 0, 0, None))[3] == want,
                      "scaler %s step %d: %s is the plain loop's times %g"
                      % (how, s, k, want[0] / a[k][3][0] if a[k][3][0] else 1))
    meta, _, _ = read(os.path.join(plain, files[0]))
    check("grads_scaled" not in meta, "scaler: no grads_scaled without a scaler", repr(meta))
    sc = StandInScaler(4.0, 2)
    dumper = fpkit_dump.FpkitDumper(model, os.path.join(os.environ["TMPDIR_CHECK"], "both"),
                                    scaler=sc, activations=False)
    try:
        dumper.before_step(0, 1.0, loss_scale=4)
        check(False, "scaler: refuses loss_scale beside a scaler")
    except ValueError:
        check(True, "scaler: refuses loss_scale beside a scaler")
    try:
        fpkit_dump.FpkitDumper(model, os.path.join(os.environ["TMPDIR_CHECK"], "x"), scaler=4.0)
        check(False, "scaler: refuses a scaler that is not one")
    except TypeError:
        check(True, "scaler: refuses a scaler that is not one")


def fpscale(plain, scaled, unscaled_by_fpscale):
    """fpscale --json: the scaled dump replayed with --grads-scaled is the
    plain dump replayed without it, step by step, but for the file names;
    the scaled dump without --grads-scaled is not."""
    def steps(path):
        return [{k: v for k, v in st.items() if k not in ("file", "loss_scale")}
                for st in json.load(open(path))["steps"]]
    a, b, c = steps(plain), steps(scaled), steps(unscaled_by_fpscale)
    check(len(a) == 4 and a == b, "fpscale --grads-scaled on the scaled dump: the plain replay",
          "%r\n%r" % (a, b))
    check(a != c, "fpscale without --grads-scaled on the scaled dump: another replay")


PRELUDE = """\
import os
import torch

torch.manual_seed(0)
torch.set_num_threads(1)
rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
device = "cpu"


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.relu1 = torch.nn.ReLU()
        self.fc1 = torch.nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.fc1(torch.flatten(self.relu1(self.conv1(x)), 1))


model = Net()
loss_fn = torch.nn.functional.cross_entropy
optimizer = torch.optim.SGD(model.parameters(), lr=2.0 ** -4)
g = torch.Generator().manual_seed(1)
batches = [(torch.randn(8, 1, 8, 8, generator=g), torch.randint(0, 10, (8,), generator=g))
           for _ in range(101)]
loader = [(x[rank::world], y[rank::world]) for x, y in batches]
# the man page's example:
"""


def examples(manpage, workdir):
    """The Python examples of the man page, each after PRELUDE (model,
    loss_fn, optimizer, device; loader: 101 batches of 8, this rank's part
    of each), as WORKDIR/plain.py, ddp.py and scaler.py."""
    src = open(manpage, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(src):
        if src[i].startswith(".Bd -literal"):
            j = src.index(".Ed", i)
            if any("FpkitDumper(" in line for line in src[i + 1:j]):
                blocks.append("\n".join(src[i + 1:j]).replace("\\e", "\\").replace("\\&", "")
                              .replace("\\-", "-") + "\n")
            i = j
        i += 1
    kinds = {}
    for b in blocks:
        kind = "ddp" if "init_process_group" in b else "scaler" if "GradScaler" in b else "plain"
        kinds.setdefault(kind, []).append(b)
        with open(os.path.join(workdir, kind + ".py"), "w") as f:
            f.write(PRELUDE + b)
    check(sorted(kinds) == ["ddp", "plain", "scaler"] and len(blocks) == 3,
          "man page: one example of each use", repr(kinds))
    # the EXAMPLES that read a distributed run's files
    cmds = [line[len("$ "):] for line in (re.sub(r"^\.Dl ", "", x) for x in src)
            if re.match(r"\$ (fpgrad --shards|fpscale .*rank)", line.replace("\\-", "-"))]
    with open(os.path.join(workdir, "commands"), "w") as f:
        f.write("".join(c.replace("\\-", "-") + "\n" for c in cmds))
    check(len(cmds) == 2, "man page: the commands for a distributed run", repr(cmds))


def close(a, b, tol):
    """Whether lists A and B agree to TOL times the largest magnitude."""
    top = max([abs(x) for x in a] + [1e-30])
    return len(a) == len(b) and all(abs(x - y) <= tol * top for x, y in zip(a, b))


def examples_run(workdir, scaler_ran):
    """What the man page's examples wrote, in WORKDIR/KIND/dumps: steps 0
    and 100; two ranks under DDP, rank 0 with the batch's mean gradient
    (the plain loop's), each rank with the activation gradients of its half
    of the batch (twice the plain loop's rows: its loss is a mean over half
    as many); with the GradScaler, gradients times a power of two."""
    params = ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]
    acts = ["actgrad/conv1", "actgrad/relu1", "actgrad/fc1"]
    full = ["%s/%s" % (k, p) for k in ("grad", "weight", "update") for p in params] + acts
    d = os.path.join(workdir, "plain", "dumps")
    files = sorted(os.listdir(d))
    check(files == ["step-000000.safetensors", "step-000100.safetensors"],
          "example: plain use: steps 0 and 100", repr(files))
    plain = {}
    for f in files:
        meta, plain[f] = layout(os.path.join(d, f), "1")
        check(list(plain[f]) == full, "example: plain use: %s: the tensors" % f)
        check(not {"rank", "world_size", "grads_scaled"} & set(meta),
              "example: plain use: metadata", repr(meta))
    one = plain.get("step-000000.safetensors", {})
    d = os.path.join(workdir, "ddp", "dumps")
    files = sorted(os.listdir(d))
    want = ["step-%06d-rank%04d-of-0002.safetensors" % (s, r) for s in (0, 100) for r in (0, 1)]
    check(files == want, "example: DDP: each rank's file", repr(files))
    if files == want:
        r0 = layout(os.path.join(d, files[0]), "1")[1]
        r1 = layout(os.path.join(d, files[1]), "1", params=False)[1]
        for f in files[2:]:
            layout(os.path.join(d, f), "1", params="rank0000" in f)
        check(list(r0) == full and list(r1) == acts, "example: DDP: the tensors of each rank",
              "%r %r" % (list(r0), list(r1)))
        check(all(r0["weight/" + p][3] == one["weight/" + p][3] for p in params),
              "example: DDP step 0: the plain loop's weights")
        check(all(close(one["grad/" + p][3], r0["grad/" + p][3], 1e-5) for p in params),
              "example: DDP step 0: rank 0's gradients are the whole batch's")
        for a in acts:
            shape = one[a][2]
            row = math.prod(shape[1:])
            rows = [one[a][3][i * row:(i + 1) * row] for i in range(shape[0])]
            ok = r0[a][2] == r1[a][2] == [shape[0] // 2] + shape[1:]
            for r, mine in enumerate((r0[a][3], r1[a][3])):
                ok = ok and close([2 * x for i in range(r, shape[0], 2) for x in rows[i]], mine,
                                  1e-5)
            check(ok, "example: DDP step 0: %s of each rank is its half of the batch's" % a)
    if scaler_ran != "yes":
        return
    d = os.path.join(workdir, "scaler", "dumps")
    files = sorted(os.listdir(d))
    check(files == ["step-000000.safetensors", "step-000100.safetensors"],
          "example: GradScaler: steps 0 and 100", repr(files))
    for f in files:
        meta, _, _ = read(os.path.join(d, f))
        scale = meta.get("loss_scale", "")
        log2 = math.log2(float(scale)) if scale.isdigit() and int(scale) > 0 else 0.5
        check(log2 == int(log2) and meta.get("grads_scaled") == "1",
              "example: GradScaler %s: a power of two, grads scaled" % f, repr(meta))
        names = layout(os.path.join(d, f), scale)[1]
        if f == files[0]:
            check(all(close([x * float(scale) for x in one["grad/" + p][3]],
                            names["grad/" + p][3], 1e-2) for p in params),
                  "example: GradScaler step 0: the gradients, times loss_scale")


def shards(jsonfile, directory):
    """fpgrad --shards --json on DIRECTORY: one row per step and tensor, its
    counts those of the tensor's shards together (this reader's)."""
    doc = json.load(open(jsonfile))
    got = {}
    for t in doc["tensors"]:
        step = re.search(r"step-(\d+)-", os.path.basename(t["file"])).group(1)
        check((step, t["name"]) not in got,
              "fpgrad --shards: one row for %s %s" % (step, t["name"]))
        got[step, t["name"]] = (t["count"], t["zeros"])
    want = {}
    for f in sorted(os.listdir(directory)):
        step = re.search(r"step-(\d+)-", f).group(1)
        for name, _, shape, v in read(os.path.join(directory, f))[1]:
            c, z = want.get((step, name), (0, 0))
            want[step, name] = (c + math.prod(shape), z + sum(1 for x in v if x == 0))
    check(got == want, "fpgrad --shards: %d rows, one per step and tensor, their counts"
          % len(want), "%r\n%r" % (got, want))


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
# usage_error PATTERN ARGS...: --demo with ARGS is a usage error (status 2)
# whose message matches PATTERN, with no traceback and no output directory.
usage_error() {
    pattern=$1
    shift
    rc=0
    "$torch_python" "$dumper" --demo "$tmp/bad" "$@" >/dev/null 2>"$tmp/bad.err" || rc=$?
    if [ "$rc" -eq 2 ] && grep -q "$pattern" "$tmp/bad.err" &&
        ! grep -q Traceback "$tmp/bad.err" && [ ! -e "$tmp/bad" ]; then
        ok
    else
        bad "fpkit_dump.py --demo $*: exit $rc: $(tail -n 2 "$tmp/bad.err")"
    fi
}
# Bad option values, naming the option.
for bad_opt in "--every 0" "--steps -1" "--loss-scale 0" "--loss-scale nan" "--every x"; do
    # shellcheck disable=SC2086 # an option and its value
    usage_error "argument ${bad_opt% *}: " $bad_opt
done
# The GPU's options where torch sees no GPU.
if ! "$torch_python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    2>/dev/null; then
    usage_error "error: --cuda: torch .* sees no CUDA device" --cuda
    usage_error "error: --device-stats: torch .* sees no CUDA device" --device-stats
fi
count demo "$torch_python" demo "$tmp/d1" "$tmp/d2" "$tmp/d3"
count api "$torch_python" api "$srcdir/tools/dumper"
count ranks "$torch_python" ranks "$srcdir/tools/dumper"
count scaler "$torch_python" scaler "$srcdir/tools/dumper" "$tmp/s-plain" "$tmp/s-scaled" \
    "$tmp/s-unscaled" "$tmp/s-disabled"
# fpscale: the GradScaler's dump with --grads-scaled replays as the plain one.
if [ -x "$FPSCALE" ]; then
    for match in '^grad/' '^(grad|actgrad)/'; do
        if "$FPSCALE" --quiet --match "$match" --json "$tmp/fs-plain.json" "$tmp/s-plain" &&
            "$FPSCALE" --quiet --match "$match" --grads-scaled --json "$tmp/fs-scaled.json" \
                "$tmp/s-scaled" &&
            "$FPSCALE" --quiet --match "$match" --json "$tmp/fs-raw.json" "$tmp/s-scaled"; then
            count fpscale "$python" fpscale "$tmp/fs-plain.json" "$tmp/fs-scaled.json" \
                "$tmp/fs-raw.json"
        else
            bad "fpscale --match '$match' on the GradScaler's dumps failed"
        fi
    done
else
    skipped "fpscale --grads-scaled on a GradScaler's dumps ($FPSCALE is not built)"
fi

# The man page's examples, each after a prelude that makes a model and its
# data, in a folder of its own, with the source tree's dumper on PYTHONPATH.
count examples "$python" examples "$srcdir/man/fpkit-dumps.5.in" "$tmp"
# example KIND LABEL ENV...: starts $tmp/KIND.py in $tmp/KIND in the
# background, with the variables ENV; its output in $tmp/LABEL.{out,err}.
example() {
    kind=$1 label=$2
    shift 2
    mkdir -p "$tmp/$kind"
    (cd "$tmp/$kind" && env PYTHONPATH="$srcdir/tools/dumper" "$@" \
        timeout 300 "$torch_python" "$tmp/$kind.py") >"$tmp/$label.out" 2>"$tmp/$label.err" &
}
# example_done PID LABEL: waits for that run: exit 0, nothing on stderr.
example_done() {
    rc=0
    wait "$1" || rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/$2.err" ]; then
        ok
    else
        bad "the man page's example ($2): exit $rc: $(tail -n 5 "$tmp/$2.err")"
    fi
}
example plain plain
example_done $! plain
# DDP on two processes of the gloo backend, on a free port of the loopback
# interface, with the variables torchrun sets.
port=$("$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
set -- GLOO_SOCKET_IFNAME=lo MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" WORLD_SIZE=2
example ddp ddp1 "$@" RANK=1 LOCAL_RANK=1
ddp1=$!
example ddp ddp0 "$@" RANK=0 LOCAL_RANK=0
example_done $! ddp0
example_done "$ddp1" ddp1
scaler_ran=no
if "$torch_python" -c 'import torch; torch.amp.GradScaler("cpu")' >/dev/null 2>&1; then
    example scaler scaler
    example_done $! scaler
    scaler_ran=yes
else
    skipped "the man page's GradScaler example (torch.amp.GradScaler on the CPU needs torch 2.3)"
fi
count examples-run "$python" examples_run "$tmp" "$scaler_ran"
if [ "$have_fpgrad" = yes ]; then
    if "$FPGRAD" --quiet --shards --json "$tmp/shards.json" "$tmp/ddp/dumps" >/dev/null \
        2>"$tmp/fpgrad.err"; then
        count shards "$python" shards "$tmp/shards.json" "$tmp/ddp/dumps"
    else
        bad "fpgrad --shards on the DDP example's dumps: $(head -n 3 "$tmp/fpgrad.err")"
    fi
fi
# The man page's fpgrad --shards and fpscale commands, on the DDP example's
# files.
if [ "$have_fpgrad" = yes ] && [ -x "$FPSCALE" ]; then
    mkdir -p "$tmp/bin"
    for t in "$FPGRAD" "$FPSCALE"; do
        ln -s "$(cd "$(dirname "$t")" && pwd)/$(basename "$t")" "$tmp/bin/"
    done
    while IFS= read -r line; do
        if (cd "$tmp/ddp" && PATH=$tmp/bin:$PATH && eval "$line") >/dev/null 2>"$tmp/cmd.err"; then
            ok
        else
            bad "the man page's $line on the DDP example: $(head -n 3 "$tmp/cmd.err")"
        fi
    done <"$tmp/commands"
else
    skipped "the man page's fpgrad and fpscale commands (needs both built)"
fi
if [ "$have_fpgrad" = yes ]; then
    if "$FPGRAD" --quiet --json "$tmp/demo.json" "$tmp/d1" "$tmp/d3" >/dev/null 2>"$tmp/fpgrad.err"; then
        count fpgrad-demo "$python" fpgrad "$tmp/demo.json" "$tmp/d1" "$tmp/d3"
    else
        bad "fpgrad --json on the demo dumps: $(head -n 3 "$tmp/fpgrad.err")"
    fi
fi

summary
