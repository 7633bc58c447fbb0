#!/bin/sh
# The device-statistics mode of tools/dumper/fpkit_dump.py: its ctypes binding of
# libfpkit_cuda (load_cuda_library, fpk_cuda_stats_json) on zero elements
# and on names the library refuses, which needs no GPU and no torch (a
# stand-in torch module lets the module load); then, where torch sees a
# CUDA device, device_stats() of tensors on the GPU against fpgrad's counts
# of the same tensors dumped, and the demo's --device-stats files (one
# line per tensor, fpk_stats JSON with the step's keys).  The GPU part is
# reported as skipped without torch or a device; without python3 the test
# is skipped (exit 77).
#
# make check runs it from the build directory with srcdir set.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
tool=check_cuda_dump
. "$srcdir/tests/toolcheck.sh"
need_python
lib=$(pwd)/cuda/.libs/libfpkit_cuda.so
FPGRAD=${FPGRAD:-$(pwd)/bin/fpgrad}
[ -f "$lib" ] || { echo "check_cuda_dump: $lib is missing"; exit 99; }

# The binding, with a stand-in for torch: import, load, call.
if python3 - "$srcdir/tools/dumper" "$lib" >"$tmp/binding.out" 2>&1 <<'EOF'
import ctypes, json, sys, types
torch = types.ModuleType("torch")
for name in ("float64", "float32", "float16", "bfloat16"):
    setattr(torch, name, object())
torch.nn = types.SimpleNamespace(Module=object)
torch.__version__ = "stand-in"
sys.modules["torch"] = torch
sys.path.insert(0, sys.argv[1])
import fpkit_dump

lib = fpkit_dump.load_cuda_library(sys.argv[2])
err = fpkit_dump._FpkError()
p = lib.fpk_cuda_stats_json(None, 0, b"bf16", b"fp16,e4m3", 2.0, b"rtz", False, True, None,
                            ctypes.byref(err))
assert p, err.msg
doc = json.loads(ctypes.string_at(p).decode())
lib.fpk_cuda_free(p)
assert doc["count"] == 0 and doc["scale"] == 2.0 and doc["round"] == "rtz", doc
assert doc["saturate"] is True and doc["ftz"] is False, doc
assert list(doc["formats"]) == ["fp16", "e4m3"], doc
assert doc["formats"]["e4m3"] == {"underflow": 0, "subnormal": 0, "overflow": 0}, doc
for args, what in (((b"f99", b"fp16", b"rne"), "unknown element type"),
                   ((b"f32", b"fp16,bogus", b"rne"), "unknown format"),
                   ((b"f32", b"fp16", b"nearest"), "unknown rounding mode")):
    err = fpkit_dump._FpkError()
    p = lib.fpk_cuda_stats_json(None, 0, args[0], args[1], 1.0, args[2], False, False, None,
                                ctypes.byref(err))
    assert not p and err.code == 1 and what in err.msg.decode(), (args, err.msg)
try:
    fpkit_dump.load_cuda_library("/nonexistent/libfpkit_cuda.so")
    raise AssertionError("a missing library loaded")
except OSError:
    pass
print("binding: ok")
EOF
then
    ok
else
    bad "the ctypes binding: $(tail -n 5 "$tmp/binding.out")"
fi

if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    skipped "device_stats() and --device-stats on a GPU (no torch with a CUDA device here)"
    summary
    exit $?
fi

# device_stats() against fpgrad on the same tensors, dumped.
if FPKIT_CUDA_LIB=$lib python3 - "$srcdir/tools/dumper" "$tmp" "$FPGRAD" >"$tmp/gpu.out" 2>&1 <<'EOF'
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
import torch
import fpkit_dump
tmp, fpgrad = sys.argv[2], sys.argv[3]
torch.manual_seed(3)
tensors = [("a", torch.randn(1000, 77) * 1e-6), ("b", torch.randn(4099) * 3e4),
           ("c", (torch.randn(300) * 1e-3).to(torch.bfloat16)),
           ("d", (torch.randn(513) * 10).to(torch.float16)), ("e", torch.zeros(5))]
formats = "fp16,bf16,e4m3,e5m2"
got = {n: fpkit_dump.device_stats(t.cuda(), formats=formats) for n, t in tensors}
fpkit_dump.write_safetensors(os.path.join(tmp, "t.safetensors"), tensors)
subprocess.run([fpgrad, "--quiet", "--formats", formats, "--json", os.path.join(tmp, "t.json"),
                os.path.join(tmp, "t.safetensors")], check=True, stdout=subprocess.DEVNULL)
ref = {t["name"]: t for t in json.load(open(os.path.join(tmp, "t.json")))["tensors"]}
for n, _ in tensors:
    g, r = got[n], ref[n]
    assert (g["count"], g["zeros"]) == (r["count"], r["zeros"]), (n, g, r)
    for f in formats.split(","):
        for k in ("underflow", "subnormal", "overflow"):
            assert g["formats"][f][k] == r["formats"][f][k], (n, f, k, g["formats"][f], r["formats"][f])
print("device_stats: %d tensors agree with fpgrad" % len(tensors))
EOF
then
    ok
else
    bad "device_stats() against fpgrad: $(tail -n 5 "$tmp/gpu.out")"
fi

# The demo's statistics: a file per step, a line per tensor.
if FPKIT_CUDA_LIB=$lib python3 "$srcdir/tools/dumper/fpkit_dump.py" --demo "$tmp/d" --steps 3 \
    --device-stats >"$tmp/demo.out" 2>"$tmp/demo.err" &&
    python3 - "$tmp/d" >"$tmp/lines.out" 2>&1 <<'EOF'
import json, os, sys
d = sys.argv[1]
files = sorted(os.listdir(d))
assert files == ["step-000000.jsonl", "step-000001.jsonl", "step-000002.jsonl"], files
for f in files:
    lines = [json.loads(l) for l in open(os.path.join(d, f))]
    names = [l["tensor"] for l in lines]
    assert names[0] == "grad/conv.weight" and "actgrad/fc" in names, names
    for l in lines:
        assert l["step"] == int(f[5:11]) and l["count"] > 0 and list(l["formats"]) == \
            ["fp16", "bf16", "e4m3", "e5m2"], l
        assert l["count"] == l["zeros"] + l["nonfinite"] + sum(l["log2_hist"]["counts"]), l
EOF
then
    ok
else
    bad "--demo --device-stats: $(tail -n 5 "$tmp/demo.err" "$tmp/lines.out")"
fi

summary
