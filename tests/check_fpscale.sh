#!/bin/sh
# fpscale on dump series whose answers are known exactly: gradients made to
# overflow fp16 at known steps give a skip pattern and scale trajectory
# written out by hand (GradScaler's rules, growth every 3 steps), FP8
# delayed scaling on a crafted amax history gives hand-computed scales,
# saturation and underflow, with exact and power-of-two scales, the max and
# the most recent amax, current scaling beside them; a sweep of settings
# recomputed independently with numpy (tests/fpscale_numpy.py), its
# ranking, text, JSON and CSV; step order from metadata and from file
# names; the JSON; the text (its summary agrees with the JSON, --top and
# --all, 100 columns); the error cases; the plot; and the man page's
# examples on the bundled sample, whose printed output must reproduce.
#
# make check runs it from the build directory with srcdir set; FPSCALE
# names another binary.  Parts that need gnuplot or mandoc are reported as
# skipped when those are missing.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPSCALE=${FPSCALE:-./bin/fpscale}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
manpage=$srcdir/man/fpscale.1
tool=fpscale tool_bin=$FPSCALE
. "$srcdir/tests/toolcheck.sh"
need_python

python3 - "$tmp" <<'EOF'
import json, math, os, struct, sys

out = sys.argv[1]
p2 = lambda e: math.ldexp(1.0, e)

def npy(path, values):
    data = struct.pack("<%dd" % len(values), *values)
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)

def safetensors(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    for name, values in tensors:
        b = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": [len(values)], "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

# Loss scaling, steps 1..14.  fp16 overflows at |x*S| >= 65520: 2 * 2^15
# and 3 * 2^15 overflow, 0.25 * 2^17 does not.  Steps 3 and 7 overflow
# (one element at 3, two at 7).  Underflow (|x*S| <= 2^-25 rounds to 0):
# 2^-42 at every scale up to 2^17; 2^-40 only at 2^15 (2^-25, a tie to 0).
def grads(step):
    a = [0.25, -0.125, 0.0]
    if step == 3:
        a[0] = 2.0
    if step == 7:
        a[0], a[1] = -3.0, 2.0
    return a, [p2(-42), p2(-40)]

dirs = {k: os.path.join(out, k) for k in ("meta", "names", "scaled", "act")}
for d in dirs.values():
    os.mkdir(d)
for step in range(1, 15):
    a, b = grads(step)
    # File names count down: only the metadata gives the order.
    safetensors(os.path.join(dirs["meta"], "dump-%02d.safetensors" % (15 - step)),
                [("grad/a", a), ("grad/b", b), ("weight/a", [1e9])], {"step": str(step)})
    # No metadata: the number in the name, not zero-padded (g-10 sorts before g-2).
    npy(os.path.join(dirs["names"], "g-%d.npy" % step), a + b)
    # Gradients stored times their loss scale 1024, with the step in the name.
    safetensors(os.path.join(dirs["scaled"], "s%d.safetensors" % step),
                [("grad/a", [x * 1024 for x in a]), ("grad/b", [x * 1024 for x in b])],
                {"loss_scale": "1024"})
    # Activation gradients that overflow at every scale the replay reaches.
    safetensors(os.path.join(dirs["act"], "step%d.safetensors" % step),
                [("grad/a", a), ("actgrad/fc", [1e6, 1.0])], {"step": str(step)})

# FP8 (e4m3, max 448; |x*s| > 464 saturates, <= 2^-10 rounds to 0), steps
# 1..6.  grad/w: amax 1, 4, 8, 0.5, 0.25, 0.25 (the third element always
# underflows).  grad/z: zeros, then 1, then inf (non-finite amax), 2, 0.5.
os.mkdir(os.path.join(out, "fp8"))
W = {1: [1.0, -0.5, p2(-12)], 2: [4.0, -2.0, p2(-20)], 3: [8.0, 4.0, p2(-17)],
     4: [0.5, 0.25, p2(-16)], 5: [0.25, p2(-16)], 6: [0.25, p2(-20)]}
Z = {1: [0.0, 0.0], 2: [1.0], 3: [float("inf"), 1.0], 4: [2.0], 5: [0.5], 6: [0.25]}
for step in range(1, 7):
    t = [("grad/w", W[step]), ("grad/z", Z[step])]
    if step >= 3:
        t.append(("grad/v", [p2(-3)]))
    safetensors(os.path.join(out, "fp8", "step-%d.safetensors" % step), t, {"step": str(step)})

# An amax whose scale 448 / 1e-37 overflows float32: the largest float32.
os.mkdir(os.path.join(out, "tiny"))
for step in (1, 2):
    safetensors(os.path.join(out, "tiny", "t%d.safetensors" % step), [("grad/t", [1e-37, 0.0])],
                {"step": str(step)})

# Growth capped by float32: 2^127 * 2 is inf, so the scale stays.
# One step, one tensor, one element overflowing: the text's singulars.
os.mkdir(os.path.join(out, "one"))
safetensors(os.path.join(out, "one", "s.safetensors"), [("grad/a", grads(3)[0][:1])], {"step": "3"})

os.mkdir(os.path.join(out, "cap"))
for step in range(1, 4):
    safetensors(os.path.join(out, "cap", "c%d.safetensors" % step), [("grad/a", [p2(-120)])])

# Broken series.
for d in ("nonum", "dup", "badmeta", "odd", "big", "huge"):
    os.mkdir(os.path.join(out, d))
npy(os.path.join(out, "nonum", "grad.npy"), [1.0])
# int64's largest step, and one past it
npy(os.path.join(out, "big", "g-9223372036854775807.npy"), [1.0])
npy(os.path.join(out, "big", "g-1000000000000000000.npy"), [1.0])
npy(os.path.join(out, "huge", "g-9223372036854775808.npy"), [1.0])
safetensors(os.path.join(out, "dup", "a.safetensors"), [("grad/a", [1.0])], {"step": "5"})
safetensors(os.path.join(out, "dup", "b.safetensors"), [("grad/a", [1.0])], {"step": "5"})
safetensors(os.path.join(out, "badmeta", "x1.safetensors"), [("grad/a", [1.0])], {"step": "five"})
safetensors(os.path.join(out, "odd", "o1.safetensors"), [("grad/a", [1.0])], {"loss_scale": "3"})
os.mkdir(os.path.join(out, "empty"))
EOF




# check NAME PYTHON: the expression holds over d (the JSON in NAME.out),
# S (its steps), col(key) (that key of every step), T (tensor rows by name:
# T[name] is the list of (step, row) in fp8 mode).
check() {
    name=$1
    if python3 - "$tmp/$name.out" "$2" <<'EOF'
import json, sys
path, expr = sys.argv[1:]
d = json.load(open(path, encoding="utf-8"))
S = d["steps"]
col = lambda k: [s[k] for s in S]
T = {}
for s in S:
    for t in (s["tensors"] if isinstance(s["tensors"], list) else []):
        T.setdefault(t["name"], []).append((s["step"], t))
tcol = lambda n, k: [t[k] for _, t in T[n]]
if not eval("(" + expr + "\n)"):
    print("false: " + expr)
    print(json.dumps(S[:3])[:1500])
    sys.exit(1)
EOF
    then
        ok
    else
        bad "$name: JSON check failed"
    fi
}


# The trajectory by hand, growth interval 3: 2^16 at steps 1-3, step 3
# overflows (2 * 2^16): 2^15 at 4-6, grown after 3 clean steps: 2^16 at 7,
# which overflows: 2^15 at 8-10, 2^16 at 11-13, 2^17 at 14.
expect_log2='[16, 16, 16, 15, 15, 15, 16, 15, 15, 15, 16, 16, 16, 17]'
expect_skip='[s in (3, 7) for s in range(1, 15)]'
expect_under='[2 if k == 15 else 1 for k in '$expect_log2']'
traj='col("scale_log2") == '$expect_log2' and col("skipped") == '$expect_skip'
    and col("step") == list(range(1, 15)) and col("underflow") == '$expect_under'
    and col("overflow") == [1 if s == 3 else 2 if s == 7 else 0 for s in range(1, 15)]
    and col("nonzero_finite") == [4] * 14 and col("nonfinite") == [0] * 14
    and col("scale") == [2.0 ** k for k in '$expect_log2']
    and col("growth_tracker") == [1, 2, 0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 0, 1]
    and [s["next_scale"] for s in S[:-1]] == col("scale")[1:] and S[-1]["next_scale"] == 2.0 ** 17
    and d["total"]["skipped"] == 2 and d["total"]["final_scale"] == 2.0 ** 17'

good meta --json - --growth-interval 3 "$tmp/meta"
check meta "$traj"
check meta 'd["tool"] == "fpscale" and d["mode"] == "loss" and d["format"] == "fp16"
    and d["match"] == "^grad/" and d["grads_scaled"] is False
    and d["params"] == {"init_scale": 65536, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 3}
    and list(d) == ["tool", "version", "mode", "format", "match", "grads_scaled", "params", "steps", "total"]
    and list(S[0]) == ["step", "file", "step_from", "scale", "scale_log2", "skipped", "tensors", "count",
        "nonzero_finite", "nonfinite", "overflow", "underflow", "overflow_frac", "underflow_frac",
        "growth_tracker", "next_scale", "per_tensor"]
    and [[t["name"] for t in s["per_tensor"]] for s in S] == [["grad/a", "grad/b"]] * 14
    and all(t["step"] == s["step"] for s in S for t in s["per_tensor"])
    and list(S[2]["per_tensor"][0]) == ["name", "step", "count", "nonzero_finite", "nonfinite",
        "overflow", "underflow", "overflow_frac", "underflow_frac"]
    and [t["overflow"] for t in S[2]["per_tensor"]] == [1, 0]
    and all(sum(t[k] for t in s["per_tensor"]) == s[k] for s in S
            for k in ("count", "nonzero_finite", "nonfinite", "overflow", "underflow"))
    and col("step_from") == ["metadata"] * 14 and col("tensors") == [2] * 14
    and S[0]["file"].endswith("dump-14.safetensors") and S[2]["overflow_frac"] == 0.25
    and d["total"]["nonzero_finite"] == 56 and d["total"]["overflow"] == 3'

good names --json - --growth-interval 3 --match . "$tmp/names"
check names "$traj"
check names 'col("step_from") == ["name"] * 14 and S[9]["file"].endswith("g-10.npy")'

good scaled --json - --growth-interval 3 --grads-scaled "$tmp/scaled"
check scaled "$traj"
check scaled 'd["grads_scaled"] is True and col("loss_scale") == [1024] * 14'

# Activation gradients included: every step overflows and backs off.
good act --json - --growth-interval 3 --match '^(grad|actgrad)/' "$tmp/act"
check act 'col("scale_log2") == list(range(16, 2, -1)) and all(col("skipped"))
    and d["total"]["final_scale"] == 2.0 ** 2'
good act-grad --json - --growth-interval 3 "$tmp/act"
check act-grad 'col("scale_log2") == '"$expect_log2"

# The default interval (2000) never grows in 14 steps: 2^16, 2^15 after
# step 3, 2^14 after step 7 (2 * 2^15 overflows too).
good default --json - "$tmp/meta"
check default 'col("scale_log2") == [16] * 3 + [15] * 4 + [14] * 7
    and col("skipped") == [s in (3, 7) for s in range(1, 15)]'

# Growth stops where float32 ends: 2^127 * 2 is inf.
good cap --json - --init-scale 2^127 --growth-interval 1 "$tmp/cap"
check cap 'col("scale_log2") == [127] * 3 and col("growth_tracker") == [0] * 3'
# Other factors, in float32: 1, 3, 9 growing by 3 each step; a backoff of
# 0.3 from 2^16 is float32(65536 * 0.3) = 10066330 * 2^-9 = 19660.80078125
# (65536 * 0.3 = 19660.8 exactly scaled; 19660.8 / 2^-9 = 10066329.6).
good factors --json - --init-scale 1 --growth-factor 3 --growth-interval 1 "$tmp/cap"
check factors 'col("scale") == [1, 3, 9] and S[-1]["next_scale"] == 27 and col("scale_log2") == [0, None, None]'
good backoff --json - --backoff-factor 0.3 --growth-interval 3 "$tmp/meta"
check backoff 'col("scale")[:4] == [65536, 65536, 65536, 19660.80078125]'
# Another format: bf16 holds 2 * 2^16, and the scale grows.
good bf16 --json - --format bf16 --growth-interval 5 "$tmp/meta"
check bf16 'not any(col("skipped")) and col("scale_log2") == [16] * 5 + [17] * 5 + [18] * 4'

# The text: the summary (the scale where it changes; the underflow, over
# more than six steps, at its ends and extremes: 1 of 4 nonzero elements,
# 2 of 4 at 2^15), the worst tensors at a step, the steps.
good text --growth-interval 3 "$tmp/meta"
has text '^fpscale: 14 steps \(1 to 14\), 2 tensors a step matching \^grad/$' \
    '^loss scaling in fp16: init 2\^16, growth 2 every 3 clean steps, backoff 0\.5$' \
    '^  Scale: 2\^16 at step 1, 2\^15 at 4, 2\^16 at 7, 2\^15 at 8, 2\^16 at 11, 2\^17 at 14; then' \
    '^    clean steps toward growth\.$' \
    '^  Skipped: 2 of 14 steps \(3, 7\), where 3 elements overflowed fp16 \(worst: grad/a at step 7,' \
    '^  Underflow: 35\.71% of the nonzero gradients round to zero in fp16 at these scales: 25\.00% at step' \
    '^    1, 25\.00% at the last \(14\); lowest 25\.00% at step 1, highest 50\.00% at step 4 \(worst: grad/b at$' \
    '^ +step +scale +skipped +overflow +under % +nonzero +file$' \
    '^ +3 +2\^16 +yes +1 +25\.00 +4  dump-12\.safetensors$' \
    '^ +7 +2\^16 +yes +2 +25\.00 +4  dump-08\.safetensors$' \
    '^ +14 +2\^17 +no +0 +25\.00 +4  dump-01\.safetensors$' \
    '^Worst 10 of 28 tensors at a step, by the share underflowing or overflowing'
# Singular counts: one step, one tensor, one element; never "1 steps".
good one "$tmp/one"
has one '^fpscale: 1 step \(3\), 1 tensor a step matching' \
    '^  Skipped: 1 of 1 step \(3\), where 1 element overflowed fp16 \(worst: grad/a at step 3, 1 element\)\.$' \
    '^The one tensor at a step, by the share'
if grep -Eq '(^|[^0-9.])1 (steps|tensors|elements|clean steps)' "$tmp/one.out"; then
    bad "one: a plural after 1: $(grep -E '(^|[^0-9.])1 (steps|tensors|elements)' "$tmp/one.out")"
else
    ok
fi
# --top: the worst tensors at a step, N of them, or none; --all: every one.
good top2 --top 2 --growth-interval 3 "$tmp/meta"
good top0 --top 0 --growth-interval 3 "$tmp/meta"
good all --all --growth-interval 3 "$tmp/meta"
# rows NAME RE: the rows of the table under the line matching RE
rows() {
    awk -v h="$2" 'f && /^$/ {f=0} f && /^  [^ ]/ && !/^  tensor / {n++} $0 ~ h {f=1} END {print n + 0}' "$tmp/$1.out"
}
if [ "$(rows top2 '^Worst 2 of 28 tensors')" = 2 ] && ! grep -q '^Worst\|^All ' "$tmp/top0.out" &&
    [ "$(rows all '^Every tensor at every step')" = 28 ] && ! grep -q '^Every' "$tmp/text.out"; then
    ok
else
    bad "--top 2, --top 0 or --all: wrong rows"
fi

# FP8, history 2, by hand (scale = 448 / max of the two amaxes before):
# w: 1 (empty), 448/1, 448/4, 448/max(4,8), 448/max(8,0.5), 448/max(0.5,0.25).
# saturated: step 2 (4 and 2 times 448), step 3 (8 * 112 = 896; 4 * 112 =
# 448 stays); the last element of w underflows at every step.
# z: 1, 1 (its history max is 0: the scale stays), 448/1, then inf in
# the history keeps 448 for two steps (2 * 448 saturates at step 4), then
# 448/max(2,0.5).
# v (from step 3): 1, then 448/0.125 = 3584.
fp8='tcol("grad/w", "scale") == [1, 448, 112, 56, 56, 896]
    and tcol("grad/w", "saturated") == [0, 2, 1, 0, 0, 0]
    and tcol("grad/w", "underflow") == [1] * 6
    and tcol("grad/w", "history") == [0, 1, 2, 2, 2, 2]
    and tcol("grad/w", "history_amax") == [None, 1, 4, 8, 8, 0.5]
    and tcol("grad/w", "amax") == [1, 4, 8, 0.5, 0.25, 0.25]
    and tcol("grad/z", "scale") == [1, 1, 448, 448, 448, 224]
    and tcol("grad/z", "amax") == [0, 1, None, 2, 0.5, 0.25]
    and tcol("grad/z", "history_amax") == [None, 0, 1, None, None, 2]
    and tcol("grad/z", "nonfinite") == [0, 0, 1, 0, 0, 0]
    and tcol("grad/z", "saturated") == [0, 0, 0, 1, 0, 0]
    and tcol("grad/v", "scale") == [1, 3584, 3584, 3584]
    and [s for s, _ in T["grad/v"]] == [3, 4, 5, 6]'
good fp8 --json - --fp8 --history 2 "$tmp/fp8"
check fp8 "$fp8"
check fp8 'd["mode"] == "fp8" and d["format"] == "e4m3"
    and d["params"] == {"fp8_max": 448, "history": 2, "amax_rule": "max", "margin": 0,
        "fp8_scale": "exact"}
    and list(S[0]) == ["step", "file", "step_from", "count", "nonzero_finite", "nonfinite",
        "saturated", "underflow", "saturated_frac", "underflow_frac", "sqnr_db", "current", "tensors"]
    and list(S[0]["tensors"][0]) == ["name", "step", "scale", "scale_log2", "history", "history_amax", "amax",
        "count", "nonzero_finite", "nonfinite", "saturated", "underflow", "saturated_frac", "underflow_frac",
        "sqnr_db", "current"]
    and list(S[0]["tensors"][0]["current"]) == ["scale", "scale_log2", "saturated", "underflow",
        "saturated_frac", "underflow_frac", "sqnr_db"]
    and list(S[0]["current"]) == ["saturated", "underflow", "saturated_frac", "underflow_frac", "sqnr_db"]
    and list(d["total"]["current"]) == list(S[0]["current"])
    and col("saturated") == [0, 2, 1, 1, 0, 0] and S[1]["saturated_frac"] == 2 / 4
    and tcol("grad/w", "scale_log2") == [0, None, None, None, None, None]
    and all(t["step"] == s for n in T for s, t in T[n])
    and d["total"]["saturated"] == 4'
# The default history (1024) keeps 8 in w's history.
good fp8-long --json - --fp8 "$tmp/fp8"
check fp8-long 'tcol("grad/w", "scale") == [1, 448, 112, 56, 56, 56]
    and tcol("grad/z", "scale") == [1, 1, 448, 448, 448, 448]'
good fp8-margin --json - --fp8 --history 2 --margin 1 "$tmp/fp8"
check fp8-margin 'tcol("grad/w", "scale") == [1, 224, 56, 28, 28, 448]
    and tcol("grad/w", "saturated") == [0, 1, 0, 0, 0, 0]'
# Power-of-two scales, 2^k for the largest k with amax * 2^k <= 448: w
# 448/4 = 112 gives 2^6, 448/8 = 56 gives 2^5, 448/0.5 = 896 gives 2^9;
# saturated at step 2 (4 and 2 times 2^8), step 3 (8 * 2^6 = 512; 4 * 2^6
# = 256 stays); z 448 gives 2^8, 224 gives 2^7; v 3584 gives 2^11.
good fp8-pow2 --json - --fp8 --fp8-scale pow2 --history 2 "$tmp/fp8"
check fp8-pow2 'd["params"]["fp8_scale"] == "pow2"
    and tcol("grad/w", "scale") == [1, 256, 64, 32, 32, 512]
    and tcol("grad/w", "scale_log2") == [0, 8, 6, 5, 5, 9]
    and tcol("grad/w", "saturated") == [0, 2, 1, 0, 0, 0]
    and tcol("grad/w", "underflow") == [1] * 6
    and tcol("grad/z", "scale") == [1, 1, 256, 256, 256, 128]
    and tcol("grad/v", "scale") == [1, 2048, 2048, 2048]'
good fp8-pow2-margin --json - --fp8 --fp8-scale pow2 --history 2 --margin 1 "$tmp/fp8"
check fp8-pow2-margin 'tcol("grad/w", "scale") == [1, 128, 32, 16, 16, 256]'
good fp8-exact --json - --fp8 --fp8-scale exact --history 2 "$tmp/fp8"
if cmp -s "$tmp/fp8.out" "$tmp/fp8-exact.out"; then ok; else bad "--fp8-scale exact is not the default"; fi
# The largest margins: 448 / 1 / 2^63 and 2^64, positive float32 scales
# (2^63 once came out negative, and 2^64 as 1).
good fp8-m63 --json - --fp8 --history 2 --margin 63 "$tmp/fp8"
check fp8-m63 'tcol("grad/w", "scale")[:3] == [1, 448 * 2.0 ** -63, 112 * 2.0 ** -63]'
good fp8-m64 --json - --fp8 --history 2 --margin 64 "$tmp/fp8"
check fp8-m64 'tcol("grad/w", "scale")[:3] == [1, 448 * 2.0 ** -64, 112 * 2.0 ** -64]'

# e5m2: max 57344; 4 * 57344 and 2 * 57344 exceed 61440 and saturate.
good fp8-e5m2 --json - --fp8 --fp8-format e5m2 --history 2 "$tmp/fp8"
check fp8-e5m2 'd["params"]["fp8_max"] == 57344
    and tcol("grad/w", "scale") == [1, 57344, 14336, 7168, 7168, 114688]
    and tcol("grad/w", "saturated") == [0, 2, 1, 0, 0, 0]'
# A series of .npy files: one tensor, its step number made *, one history.
good fp8-npy --json - --fp8 --history 2 --match . "$tmp/names"
check fp8-npy 'list(T) == ["g-*.npy"] and len(T["g-*.npy"]) == 14
    and tcol("g-*.npy", "history") == [0, 1] + [2] * 12 and tcol("g-*.npy", "scale")[0] == 1
    and all(s != 1 for s in tcol("g-*.npy", "scale")[1:])'
# Gradients stored times their loss scale 1024, divided by it: the replay
# of the unscaled ones, but for the files; a loss scale of 3 is refused.
good fp8-scaled --json - --fp8 --grads-scaled --history 2 "$tmp/scaled"
good fp8-unscaled --json - --fp8 --history 2 "$tmp/meta"
if python3 - "$tmp/fp8-scaled.out" "$tmp/fp8-unscaled.out" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
strip = lambda d: [{k: v for k, v in s.items() if k not in ("file", "step_from", "loss_scale")}
                   for s in d["steps"]]
assert strip(a) == strip(b) and a["total"] == b["total"] and a["steps"][2]["saturated"] == 1
EOF
then ok; else bad "fp8 --grads-scaled: not the replay of the unscaled gradients"; fi
error fp8-inexact 2 'o1\.safetensors: dividing by the loss scale 3 is not exact' \
    --fp8 --grads-scaled "$tmp/odd"
good fp8-text --fp8 --history 2 --match '^grad/w$' --all "$tmp/fp8"
# The SQNR by hand: at step 2 the scale 448 saturates 4 and -2 to 448 and
# -448 (1 and -1 back) and flushes 2^-20: 10 log10(20 / (9 + 1 + 2^-40)) =
# 3.01 dB; current scaling (112) loses 2^-20 alone: 10 log10(20 / 2^-40).
has fp8-text '^FP8 delayed scaling in e4m3 \(max 448\): history 2 \(max\), margin 0, exact scales$' \
    '^  Saturated: 18\.75% of the nonzero elements \(3 of 16\): 0 at step 1, 66\.67% at 2' \
    '^  Underflow: 37\.50% of the nonzero elements \(6 of 16\) round to zero in e4m3: 33\.33% at' \
    '^  SQNR: 5\.92 dB over every tensor and step \(worst: grad/w at step 2, 3\.01 dB\)\.$' \
    '^  Current scaling, each tensor at 448 / its own amax: 12\.50% of the nonzero elements \(2\) round to$' \
    '^    zero and none saturates; SQNR 122\.35 dB \(worst: grad/w at step 3, 121\.38 dB\)\.$' \
    '^  tensor +step +scale +amax +satur % +under % +dB +cur under % +cur dB +nonzero$' \
    '^  grad/w +2 +448 +4 +66\.67 +33\.33 +3\.01 +33\.33 +133\.42 +3$' \
    '^  grad/w +6 +896 +0\.25 +0 +50\.00 +108\.37 +0 +125\.27 +2$' \
    '^  grad/w +1 +2\^0 +1 +0 +33\.33 +73\.22 +0 +inf +3$' \
    '^ +step +tensors +min scale +max scale +satur % +under % +dB +cur under % +cur dB$' \
    '^ +6 +1 +896 +896 +0 +50\.00 +108\.37 +0 +125\.27$'
python3 -c 'import math; print("%.2f %.2f" % (10 * math.log10(20 / (10 + 2.0 ** -40)),
    10 * math.log10(20 / 2.0 ** -40)))' >"$tmp/fp8-db.txt"
if [ "$(cat "$tmp/fp8-db.txt")" = "3.01 133.42" ]; then ok; else bad "fp8 SQNR by hand: $(cat "$tmp/fp8-db.txt")"; fi
# The casts take signed formats of at most 8 bits with a normal largest
# value: not e8m0, which has no zero.
error fp8-e8m0 2 'option --fp8-format: e8m0: .*signed, with a normal largest value' \
    --fp8 --fp8-format e8m0 --match . "$tmp/names"

# Current scaling, each tensor at 448 / its own amax: w 448/1, 448/4, ...;
# it saturates nothing; 2^-20 * 112 and 2^-17 * 56 are below 2^-10 and
# round to zero.  z: 1 for zeros and for a tensor holding inf.
check fp8 '[c["scale"] for c in tcol("grad/w", "current")] == [448, 112, 56, 896, 1792, 1792]
    and [c["saturated"] for c in tcol("grad/w", "current")] == [0] * 6
    and [c["underflow"] for c in tcol("grad/w", "current")] == [0, 1, 1, 0, 0, 0]
    and [c["scale"] for c in tcol("grad/z", "current")] == [1, 448, 1, 224, 896, 1792]
    and [c["scale"] for c in tcol("grad/v", "current")] == [3584] * 4
    and tcol("grad/z", "sqnr_db")[2] is None and tcol("grad/z", "underflow")[2] == 0
    and S[1]["current"]["underflow"] == 1 and d["total"]["current"]["saturated"] == 0
    and d["total"]["current"]["underflow"] == 2'
# The most recent amax, history 2: w 448/1, 448/4, 448/8, 448/0.5,
# 448/0.25; z keeps 1 past its zeros and 448 past its inf, then 448/2 and
# 448/0.5.
good fp8-recent --json - --fp8 --history 2 --amax-rule most-recent "$tmp/fp8"
check fp8-recent 'd["params"]["amax_rule"] == "most-recent"
    and tcol("grad/w", "scale") == [1, 448, 112, 56, 896, 1792]
    and tcol("grad/w", "history_amax") == [None, 1, 4, 8, 0.5, 0.25]
    and tcol("grad/w", "saturated") == [0, 2, 1, 0, 0, 0]
    and tcol("grad/w", "underflow") == [1, 1, 1, 1, 0, 0]
    and tcol("grad/z", "scale") == [1, 1, 448, 448, 224, 896]
    and tcol("grad/v", "scale") == [1, 3584, 3584, 3584]'
# 448 / 1e-37 overflows float32: the largest float32 (2^127 with pow2), at
# the second step and for current scaling at both.
good fp8-tiny --json - --fp8 "$tmp/tiny"
check fp8-tiny 'tcol("grad/t", "scale") == [1, 3.4028234663852886e38]
    and [c["scale"] for c in tcol("grad/t", "current")] == [3.4028234663852886e38] * 2
    and tcol("grad/t", "underflow") == [1, 0]'
good fp8-tiny-pow2 --json - --fp8 --fp8-scale pow2 "$tmp/tiny"
check fp8-tiny-pow2 'tcol("grad/t", "scale") == [1, 2.0 ** 127]
    and [c["scale"] for c in tcol("grad/t", "current")] == [2.0 ** 127] * 2'

# A sweep: every setting, every tensor at every step, recomputed with
# numpy; on the crafted series (zeros, inf) and on the sample.
sweep_fp8='history=1,2,1024 amax-rule=max,most-recent margin=0,1 fp8-scale=exact,pow2'
sweep_sample='history=1,16,1024 margin=0,1,2'
# shellcheck disable=SC2046,SC2086 # the sweep's words
good sweep-fp8 --json - --fp8 $(printf -- '--sweep %s ' $sweep_fp8) "$tmp/fp8"
# shellcheck disable=SC2046,SC2086
good sweep-sample --json - --fp8 $(printf -- '--sweep %s ' $sweep_sample) "$srcdir/tests/data/sample"
# shellcheck disable=SC2046,SC2086
good sweep-e5m2 --json - --fp8 --fp8-format e5m2 --match '^(grad|actgrad)/' \
    $(printf -- '--sweep %s ' margin=0,3 fp8-scale=pow2,exact) "$srcdir/tests/data/sample"
if ! have_modules numpy; then
    skipped "numpy: the sweeps recomputed (needs numpy)"
else
    for run in "sweep-fp8 $sweep_fp8" "sweep-sample $sweep_sample" \
        "sweep-e5m2 margin=0,3 fp8-scale=pow2,exact" "fp8" "fp8-recent"; do
        # shellcheck disable=SC2086 # the name and the sweep's words
        set -- $run
        name=$1
        shift
        if "$py" "$srcdir/tests/fpscale_numpy.py" "$tmp/$name.out" "$@" \
            >"$tmp/$name.numpy" 2>&1; then
            ok
        else
            bad "numpy: $name: $(tail -n 3 "$tmp/$name.numpy")"
        fi
    done
fi
# The JSON of a sweep, its text and its CSV: every setting, best first;
# the answer is the first, the ranking the JSON's, the CSV's lines its
# records.
# shellcheck disable=SC2046,SC2086
good sweep-text --fp8 --top 2 $(printf -- '--sweep %s ' $sweep_sample) "$srcdir/tests/data/sample"
fits sweep-text
# shellcheck disable=SC2046,SC2086
good sweep-csv --csv - --fp8 $(printf -- '--sweep %s ' $sweep_sample) "$srcdir/tests/data/sample"
if python3 - "$tmp/sweep-sample.out" "$tmp/sweep-text.out" "$tmp/sweep-csv.out" <<'EOF'
import csv, json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
rows = list(csv.DictReader(open(sys.argv[3], newline="")))
assert list(d) == ["tool", "version", "mode", "format", "match", "grads_scaled", "swept",
                   "ranked_by", "settings"], list(d)
assert d["swept"] == ["history", "margin"] and d["ranked_by"] == "lost, then sqnr_db"
S = d["settings"]
assert [s["rank"] for s in S] == list(range(1, 10))
assert all(list(s) == ["rank", "params", "steps", "total"] for s in S)
assert sorted((s["params"]["history"], s["params"]["margin"]) for s in S) == \
    [(h, m) for h in (1, 16, 1024) for m in (0, 1, 2)]
lost = [s["total"]["saturated"] + s["total"]["underflow"] for s in S]
assert lost == sorted(lost), lost
# the text: the answer names the first setting, the ranking is the JSON's order
p = S[0]["params"]
first = "Least loss: history %d, %s, margin %d, %s, where %d of the %d nonzero elements saturate" % (
    p["history"], p["amax_rule"], p["margin"], p["fp8_scale"], S[0]["total"]["saturated"],
    S[0]["total"]["nonzero_finite"])
assert first in re.sub(r"\n +", " ", text), text[:600]
table = text.split("then SQNR):\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
got = [(int(l.split()[1]), int(l.split()[3]), int(l.split()[7])) for l in table[:9]]
assert got == [(s["params"]["history"], s["params"]["margin"], n) for s, n in zip(S, lost)], got
cur = S[0]["total"]["current"]
assert table[9].split()[:2] == ["-", "current"]
assert int(table[9].split()[7]) == cur["saturated"] + cur["underflow"]
assert "\nThe least loss in detail, history %d (max), margin %d, exact scales:\n" % (
    p["history"], p["margin"]) in text
# the CSV: a line per tensor at a step and one of totals per setting, best first
recs = [(s, st, t) for s in S for st in s["steps"] for t in st["tensors"]]
tens = [r for r in rows if r["kind"] == "tensor"]
assert len(tens) == len(recs) and len(rows) == len(recs) + len(S), (len(rows), len(recs))
num = lambda v: None if v == "" else float(v)
for r, (s, st, t) in zip(tens, recs):
    assert int(r["rank"]) == s["rank"] and int(r["history"]) == s["params"]["history"]
    assert r["name"] == t["name"] and int(r["step"]) == st["step"]
    assert num(r["scale"]) == t["scale"] and int(r["history_amaxes"]) == t["history"]
    assert num(r["history_amax"]) == t["history_amax"] and num(r["amax"]) == t["amax"]
    for k in ("count", "nonzero_finite", "nonfinite", "saturated", "underflow"):
        assert int(r[k]) == t[k], k
    assert num(r["sqnr_db"]) == t["sqnr_db"]
    assert num(r["current_sqnr_db"]) == t["current"]["sqnr_db"]
    assert num(r["current_scale"]) == t["current"]["scale"]
    assert int(r["current_underflow"]) == t["current"]["underflow"]
tot = [r for r in rows if r["kind"] == "total"]
assert [int(r["rank"]) for r in tot] == list(range(1, 10))
assert all(int(r["saturated"]) == s["total"]["saturated"] and r["step"] == "" and
           num(r["sqnr_db"]) == s["total"]["sqnr_db"] for r, s in zip(tot, S))
EOF
then ok; else bad "sweep: the JSON, the text and the CSV disagree"; fi
# One replay without --sweep is the sweep's setting of the same values.
good sweep-one --json - --fp8 --history 16 --margin 1 "$srcdir/tests/data/sample"
if python3 - "$tmp/sweep-sample.out" "$tmp/sweep-one.out" <<'EOF'
import json, sys
S = json.load(open(sys.argv[1]))["settings"]
one = json.load(open(sys.argv[2]))
s = [s for s in S if s["params"]["history"] == 16 and s["params"]["margin"] == 1][0]
assert s["params"] == one["params"] and s["steps"] == one["steps"] and s["total"] == one["total"]
EOF
then ok; else bad "sweep: a setting differs from its replay alone"; fi

# Bad sweeps: one line, status 2.
error sweep-noeq 2 'option --sweep: "history" is not PARAM=V1,V2,\.\.\. \(PARAM one of history, amax-rule,' \
    --fp8 --sweep history "$tmp/fp8"
error sweep-param 2 'option --sweep: unknown parameter "hist" \(history, amax-rule, margin or fp8-scale\)' \
    --fp8 --sweep hist=1,2 "$tmp/fp8"
error sweep-empty 2 'option --sweep: an empty value in "history=1,,2"' --fp8 --sweep history=1,,2 "$tmp/fp8"
error sweep-none 2 'option --sweep: an empty value in "margin="' --fp8 --sweep margin= "$tmp/fp8"
error sweep-trail 2 'option --sweep: an empty value in "margin=1,"' --fp8 --sweep margin=1, "$tmp/fp8"
error sweep-hist0 2 'option --sweep history: "0" is not an integer from 1 to 1000000' \
    --fp8 --sweep history=1,0 "$tmp/fp8"
error sweep-margin 2 'option --sweep margin: "65" is not an integer from 0 to 64' \
    --fp8 --sweep margin=65 "$tmp/fp8"
error sweep-rule 2 'option --sweep amax-rule: "min" is neither max nor most-recent' \
    --fp8 --sweep amax-rule=max,min "$tmp/fp8"
error sweep-scale 2 'option --sweep fp8-scale: "round" is neither exact nor pow2' \
    --fp8 --sweep fp8-scale=round "$tmp/fp8"
error sweep-twice 2 'option --sweep: history is swept twice' \
    --fp8 --sweep history=1 --sweep history=2 "$tmp/fp8"
error sweep-value 2 'option --sweep: history "2" twice' --fp8 --sweep history=2,1,2 "$tmp/fp8"
error sweep-both 2 'option --history: history is swept \(--sweep history=\.\.\.\)' \
    --fp8 --sweep history=1,2 --history 4 "$tmp/fp8"
error sweep-both2 2 'option --fp8-scale: fp8-scale is swept' \
    --fp8 --fp8-scale pow2 --sweep fp8-scale=exact,pow2 "$tmp/fp8"
error sweep-many 2 'option --sweep: 585 settings, more than 256' \
    --fp8 --sweep history=1,2,3,4,5,6,7,8,9 --sweep "margin=$(seq -s, 0 64)" "$tmp/fp8"
error sweep-loss 2 'option --sweep applies to --fp8 only' --sweep margin=0,1 "$tmp/fp8"
error csv-loss 2 'option --csv applies to --fp8 only' --csv - "$tmp/fp8"
error amaxrule 2 'option --amax-rule: "latest" is neither max nor most-recent' \
    --fp8 --amax-rule latest "$tmp/fp8"
error amaxrule-loss 2 'option --amax-rule applies to --fp8 only' --amax-rule max "$tmp/fp8"

# Files, --quiet.
good files --json "$tmp/o.json" "$tmp/meta"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/o.json" &&
    grep -q '^  Skipped: ' "$tmp/files.out"; then ok; else bad "files: JSON file or table missing"; fi
good quiet --quiet --json "$tmp/q.json" "$tmp/meta"
if [ ! -s "$tmp/quiet.out" ] && [ -s "$tmp/q.json" ]; then ok; else bad "--quiet: output on stdout"; fi

# Errors.
error nonum 2 'grad\.npy: no step number' --match . "$tmp/nonum"
good big --json - --match . "$tmp/big"
check big 'col("step") == [1000000000000000000, 9223372036854775807]'
error huge 2 'g-9223372036854775808\.npy: the step number in the file name is too large' \
    --match . "$tmp/huge"
error dup 2 'step 5 twice: .*a\.safetensors and .*b\.safetensors' "$tmp/dup"
error badmeta 2 'x1\.safetensors: __metadata__ step "five" is not a step number' "$tmp/badmeta"
error nomatch 2 'g-1\.npy: no tensor matches --match .\^grad/.' "$tmp/names"
error npyscaled 2 'g-1\.npy: --grads-scaled needs the loss scale' --match . --grads-scaled "$tmp/names"
error inexact 2 'o1\.safetensors: dividing by the loss scale 3 is not exact' --grads-scaled "$tmp/odd"
error missing 2 'nosuch: cannot open' "$tmp/nosuch"
error emptydir 2 'no dumps found' "$tmp/empty"
error margin 2 'option --margin applies to --fp8 only' --margin 1 "$tmp/meta"
error history 2 'option --history applies to --fp8 only' --history 4 "$tmp/meta"
error initfp8 2 'option --init-scale applies to loss scaling' --fp8 --init-scale 1 "$tmp/meta"
error formatfp8 2 'option --format applies to loss scaling' --fp8 --format fp16 "$tmp/meta"
error fp8fmt 2 'option --fp8-format: fp16 is not an 8-bit format' --fp8 --fp8-format fp16 "$tmp/meta"
error fp8scale 2 'option --fp8-scale applies to --fp8 only' --fp8-scale pow2 "$tmp/meta"
error fp8scalebad 2 'option --fp8-scale: "round" is neither exact nor pow2' --fp8 --fp8-scale round "$tmp/meta"
error topbad 2 'option --top: "-1" is not an integer' --top -1 "$tmp/meta"
error growth 2 'option --growth-factor: "1" is not above 1' --growth-factor 1 "$tmp/meta"
error backoff 2 'option --backoff-factor: "1" is not below 1' --backoff-factor 1 "$tmp/meta"
error backoff0 2 'option --backoff-factor: "0" is not a finite positive number' --backoff-factor 0 "$tmp/meta"
error interval 2 'option --growth-interval: "0" is not an integer from 1 to' --growth-interval 0 "$tmp/meta"
error init 2 'option --init-scale: "1e39" is 0 or infinite in float32' --init-scale 1e39 "$tmp/meta"
error initneg 2 'option --init-scale: "-1" is not a finite positive number' --init-scale -1 "$tmp/meta"
error hist0 2 'option --history: "0" is not an integer' --fp8 --history 0 "$tmp/meta"
error badfmt 2 'unknown format "fp17"' --format fp17 "$tmp/meta"
error badre 2 'option --match: "\(" is not a regular expression' --match '(' "$tmp/meta"
error plotext 2 'option --plot: ".*x\.pdf" must end in \.png or \.svg' --plot "$tmp/x.pdf" "$tmp/meta"
error option 2 'unknown option "--bogus"' --bogus "$tmp/meta"
error needsarg 2 'option --json needs an argument' "$tmp/meta" --json
error noarg 2 'option --fp8 takes no argument' --fp8=1 "$tmp/meta"
error overwrite 2 'dump-01\.safetensors: is an input' --json "$tmp/meta/dump-01.safetensors" "$tmp/meta"
run usage
if [ "$(cat "$tmp/usage.rc")" -eq 2 ] && grep -q '^usage: fpscale ' "$tmp/usage.err"; then
    ok
else
    bad "no PATH: status $(cat "$tmp/usage.rc"), or no usage on stderr"
fi
good help --help
has help '^usage: fpscale '
good version --version
has version '^fpscale \(fpkit [0-9]'

# Plots: PNG of the size asked for, SVG, both modes; nothing left behind.
if [ "$have_gnuplot" = yes ]; then
    mkdir "$tmp/plots"
    good plot --quiet --growth-interval 3 --plot "$tmp/plots/l.png" --plot-size 640x400 "$tmp/meta"
    if [ "$(png_size "$tmp/plots/l.png")" = 640x400 ]; then ok; else bad "plot: not 640x400"; fi
    good plot8 --quiet --fp8 --plot "$tmp/plots/f.svg" "$tmp/fp8"
    if grep -q '<svg' "$tmp/plots/f.svg"; then ok; else bad "plot8: no <svg>"; fi
    # beside the scales, the shares per step on a second axis
    good plotsvg --quiet --growth-interval 3 --plot "$tmp/plots/l.svg" "$tmp/meta"
    for what in 'loss scale' 'skipped step' 'underflow (%)' 'overflow (%)' 'saturated (%)'; do
        case $what in saturated*) f=f.svg ;; *) f=l.svg ;; esac
        if grep -q "$what" "$tmp/plots/$f"; then ok; else bad "plot: no \"$what\" in $f"; fi
    done
    FPKIT_GNUPLOT=false
    export FPKIT_GNUPLOT
    error plotfail 3 'bad\.png: gnuplot failed' --quiet --plot "$tmp/plots/bad.png" "$tmp/meta"
    unset FPKIT_GNUPLOT
    left=$(cd "$tmp/plots" && find . -type f | sort | tr '\n' ' ')
    if [ "$left" = "./f.svg ./l.png ./l.svg " ]; then ok; else bad "plots: files left: $left"; fi
else
    skipped "plots (no gnuplot)"
fi

# The SYNOPSIS of the man page is the usage of --help.
synopsis "$manpage" "$tmp/help.out"

# The man page's examples, on the bundled sample (as tests/data/sample in
# a scratch directory): each .Dl line runs and exits 0; each literal block
# that starts with "$ fpscale" prints exactly the lines that follow it.
# shellcheck disable=SC2034 # read by the eval below
fpscale_abs=$(cd "$(dirname "$FPSCALE")" && pwd)/$(basename "$FPSCALE")
mkdir -p "$tmp/ex/tests/data"
ln -s "$(cd "$srcdir/tests/data/sample" && pwd)" "$tmp/ex/tests/data/sample"
python3 - "$manpage" "$tmp/ex" <<'EOF'
import sys
src = open(sys.argv[1], encoding="utf-8").read().splitlines()
unesc = lambda s: s.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\").replace("\\&", "")
cmds, blocks, i = [], [], 0
while i < len(src):
    if src[i].startswith(".Dl fpscale "):
        cmds.append(unesc(src[i][len(".Dl fpscale "):]))
    if src[i].startswith(".Bd -literal") and i + 1 < len(src) and src[i + 1].startswith("$ fpscale "):
        j = i + 2
        while src[j] != ".Ed":
            j += 1
        blocks.append((unesc(src[i + 1][len("$ fpscale "):]), [unesc(l) for l in src[i + 2:j]]))
        i = j
    i += 1
with open(sys.argv[2] + "/examples", "w") as f:
    f.write("".join(c + "\n" for c in cmds))
for n, (c, lines) in enumerate(blocks):
    with open("%s/block%d.cmd" % (sys.argv[2], n), "w") as f:
        f.write(c + "\n")
    with open("%s/block%d.expect" % (sys.argv[2], n), "w") as f:
        f.write("".join(l + "\n" for l in lines))
EOF
nex=0
while IFS= read -r line; do
    case $line in
    *'| '*) continue ;;
    *--plot*) [ "$have_gnuplot" = yes ] || { skipped "example needs gnuplot: fpscale $line"; continue; } ;;
    esac
    nex=$((nex + 1))
    rc=0
    (cd "$tmp/ex" && eval "\"\$fpscale_abs\" $line") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/ex.err" ]; then
        ok
    else
        bad "man page example: fpscale $line: status $rc: $(head -n 2 "$tmp/ex.err")"
    fi
done <"$tmp/ex/examples"
if [ "$nex" -ge 4 ]; then ok; else bad "$manpage: only $nex examples run"; fi
nblock=0
for cmd in "$tmp"/ex/block*.cmd; do
    [ -f "$cmd" ] || continue
    nblock=$((nblock + 1))
    line=$(cat "$cmd")
    rc=0
    (cd "$tmp/ex" && eval "\"\$fpscale_abs\" $line") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
    if [ "$rc" -eq 0 ] && cmp -s "$tmp/ex.out" "${cmd%.cmd}.expect"; then
        ok
    else
        bad "man page output of fpscale $line differs: $(diff "${cmd%.cmd}.expect" "$tmp/ex.out" | head -n 5)"
    fi
done
if [ "$nblock" -ge 2 ]; then ok; else bad "$manpage: only $nblock example outputs checked"; fi
# The JSON of the sample is valid and in the documented shape.
good sample --json - --match '^(grad|actgrad)/' "$srcdir/tests/data/sample"
check sample 'col("step") == [0, 50, 300, 919] and col("tensors") == [16] * 4 and not any(col("skipped"))'

# The text on the sample: no line wider than 100 columns, in both modes,
# with and without --all; the summary's numbers are the JSON's.
for args in "" "--all" "--fp8" "--fp8 --all" "--match ^(grad|actgrad)/ --init-scale 2^19 --all"; do
    name=wide$(printf '%s' "$args" | tr -c 'a-z0-9' '_')
    # shellcheck disable=SC2086 # a list of options
    good "$name" $args "$srcdir/tests/data/sample"
    fits "$name"
done
for mode in loss fp8; do
    opts="--init-scale 2^19 --growth-interval 1"
    [ "$mode" = fp8 ] && opts="--fp8 --fp8-scale pow2"
    # shellcheck disable=SC2086 # a list of options
    good "agree-$mode" $opts --match '^(grad|actgrad)/' "$srcdir/tests/data/sample"
    # shellcheck disable=SC2086
    good "agree-$mode-json" $opts --json - --match '^(grad|actgrad)/' "$srcdir/tests/data/sample"
    if python3 - "$tmp/agree-$mode.out" "$tmp/agree-$mode-json.out" "$mode" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
fp8 = sys.argv[3] == "fp8"
S, tot = d["steps"], d["total"]
para = re.sub(r"\n    ", " ", text.split("\nSummary:\n", 1)[1].split("\n\n", 1)[0])
def pct(n, dd):  # as the text writes a share: 0, 100%, 12.34%
    return "0" if n == 0 else "100%" if n == dd else "%.2f%%" % (100 * n / dd)
over = "saturated" if fp8 else "overflow"
under = re.search(r"Underflow: (\S+) of the nonzero", para).group(1)
assert under == pct(tot["underflow"], tot["nonzero_finite"]), (under, tot)
for s in S:
    want = "%s at %s%d" % (pct(s["underflow"], s["nonzero_finite"]), "step " if s is S[0] else "",
                           s["step"])
    assert want in para.split("Underflow:")[1], want
recs = [t for s in S for t in (s["tensors"] if fp8 else s["per_tensor"])]
share = lambda t, k: t[k] / t["nonzero_finite"] if t["nonzero_finite"] else 0
worst = max(recs, key=lambda t: (share(t, "underflow"), t["underflow"]))
m = re.search(r"Underflow: .*\(worst: (\S+) at step (\d+), (\S+)\)", para)
assert m.groups() == (worst["name"], str(worst["step"]), pct(worst["underflow"], worst["nonzero_finite"])), m.groups()
if fp8:
    sat = re.search(r"Saturated: (\S+) of the nonzero elements \((\d+) of (\d+)\)", para).groups()
    assert sat == (pct(tot["saturated"], tot["nonzero_finite"]), str(tot["saturated"]),
                   str(tot["nonzero_finite"])), sat
else:
    skipped = [s["step"] for s in S if s["skipped"]]
    assert "Skipped: %d of %d steps (%s), where %d elements overflowed" % (
        len(skipped), len(S), ", ".join(map(str, skipped)), tot["overflow"]) in para, para
    assert "; then 2^%d, %d of 1 clean step" % (
        round(__import__("math").log2(tot["final_scale"])), S[-1]["growth_tracker"]) in para
    assert para.startswith("  Scale: 2^%d at step %d, " % (S[0]["scale_log2"], S[0]["step"]))
# the worst table: the largest shares lost, as the JSON has them
table = text.split("\nWorst ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
rows = [(l.split()[0], int(l.split()[1])) for l in table]
key = lambda t: share(t, "underflow") + share(t, over) + (0 if fp8 else share(t, "nonfinite"))
ranked = sorted((t for t in recs if key(t) > 0), key=key, reverse=True)
assert rows == [(t["name"], t["step"]) for t in ranked[:10]], (rows, ranked[:3])
EOF
    then ok; else bad "agree-$mode: the summary and the JSON disagree"; fi
done

# --threads: the same replay with 1, 2 and 3 threads, both modes.
for n in 1 2 3; do
    good "thr$n" --quiet --json - --threads "$n" "$srcdir/tests/data/sample"
    good "fp8thr$n" --quiet --json - --fp8 --threads "$n" "$srcdir/tests/data/sample"
done
for m in thr fp8thr; do
    if cmp -s "$tmp/${m}1.out" "$tmp/${m}2.out" && cmp -s "$tmp/${m}1.out" "$tmp/${m}3.out"; then
        ok
    else
        bad "$m: --threads 2 or 3 changed the JSON"
    fi
done
# Without --threads, a tensor of four pieces (2^16 elements) is shared
# among the CPUs it may run on.
mkdir "$tmp/zeros"
zeros_npy "$tmp/zeros/step-000001.npy" 262144
if [ "${FPK_OPENMP:-yes}" = no ]; then
    skipped "thrdef: threads by default (the library was built without OpenMP)"
else
    threads_by_default thrdef --quiet --match . "$tmp/zeros"
fi
error threads0 2 'option --threads: "x" is not an integer from 1 to 1024' --threads x "$srcdir/tests/data/sample"

summary
