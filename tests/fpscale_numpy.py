#!/usr/bin/env python3
"""Recomputes fpscale --fp8 --sweep independently, with NumPy.

usage: fpscale_numpy.py FPSCALE_JSON [PARAM=LIST ...]

Reads the JSON of fpscale --fp8 --json (with --sweep, whose PARAM=LIST
arguments are given again here, in the same order), and the safetensors
files its steps name, with tests/recipes_numpy.py's reader and FP8
rounding.  Replays Transformer Engine's delayed scaling for every setting
as its sources describe it (a history of amaxes per tensor, the scale
FP8_MAX / amax / 2^margin in float32 or the power of two 2^(k - margin),
the scale kept where the amax is 0 or not finite), casts every tensor at
its scale (x * scale in float32, then to the FP8 format, saturating) and
at current scaling's, and checks each tensor's scales, amaxes, counts and
SQNR, the steps' and totals' sums, and the ranking (the fewest elements
lost, then the higher SQNR, then the order of the combinations).  Exits 1
with the first difference.
"""
import itertools
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recipes_numpy import E4M3, Elem, close, read_safetensors  # noqa: E402

F32 = np.float32
FORMATS = {"e4m3": E4M3, "e5m2": Elem(2, -14, 57344.0)}
PARAMS = {"history": "history", "amax-rule": "amax_rule", "margin": "margin",
          "fp8-scale": "fp8_scale"}


def pow2_k(amax, fp8_max):
    """The largest k with amax * 2^k <= fp8_max, exactly (amax > 0)."""
    m, e = math.frexp(amax)  # amax = m * 2^e, m in [0.5, 1)
    k = math.frexp(fp8_max)[1] - e + 1
    while math.ldexp(amax, k) > fp8_max:
        k -= 1
    while math.ldexp(amax, k + 1) <= fp8_max:
        k += 1
    return k


def scale_of(amax, fp8_max, margin, rule):
    """Transformer Engine's float32 scale for AMAX, or None where the scale
    in force stays (amax 0 or not finite, or a scale below float32)."""
    if not (amax > 0 and math.isfinite(amax)):
        return None
    if rule == "pow2":
        k = pow2_k(amax, fp8_max) - margin
        if k > 127:
            return float(2.0**127)
        return math.ldexp(1.0, k) if k >= -149 else None
    with np.errstate(over="ignore"):
        q = F32(F32(fp8_max) / F32(amax))
    if not np.isfinite(q):
        return float(np.finfo(F32).max)
    q = F32(q * F32(2.0**-margin))
    return float(q) if q > 0 else None


def cast(x, s, elem):
    """The counts and sums of casting float32 X at scale S."""
    x = x.ravel().astype(F32)
    if x.size and not np.all(np.isfinite(x)):  # a NaN block: nothing counted
        return {"saturated": 0, "underflow": 0, "x2": 0.0, "e2": 0.0}
    t = (x * F32(s)).astype(F32)
    q, over = elem.quantize(t.astype(np.float64))
    y = (q.astype(F32) * (F32(1) / F32(s))).astype(F32)
    nz = x != 0
    xd, yd = x.astype(np.float64)[nz], y.astype(np.float64)[nz]
    return {"saturated": int(np.sum(over[nz])), "underflow": int(np.sum(q[nz] == 0)),
            "x2": math.fsum(xd * xd), "e2": math.fsum((yd - xd) ** 2)}


def db(c):
    """The SQNR as the JSON has it: None without signal or error."""
    if not c["x2"] > 0 or c["e2"] == 0:
        return None
    return 10 * math.log10(c["x2"] / c["e2"])


def add(into, c):
    for k in ("saturated", "underflow", "x2", "e2"):
        into[k] = into.get(k, 0) + c[k]


def fail(what, got, want):
    raise SystemExit(f"{what}: fpscale {got!r}, numpy {want!r}")


def check_counts(what, got, want):
    for k in ("saturated", "underflow"):
        if got[k] != want[k]:
            fail(f"{what}: {k}", got[k], want[k])
    close(db(want), got["sqnr_db"], f"{what}: SQNR")


def replay(settings, steps, elem):
    """Each setting's records and totals, from the tensors of STEPS."""
    fp8_max = elem.max
    out = []
    for st in settings:
        hist, scale = {}, {}
        recs, sums, total, cur_total = [], [], {}, {}
        for tensors in steps:
            step_rec, step_sum, step_cur = [], {}, {}
            for name, x in tensors:
                h = hist.setdefault(name, [])
                window = h[-st["history"]:] if h else []
                if window:
                    a = window[-1] if st["amax_rule"] == "most-recent" else max(window)
                    s = scale_of(a, fp8_max, st["margin"], st["fp8_scale"])
                    if s is not None:
                        scale[name] = s
                s = scale.setdefault(name, 1.0)
                finite = bool(np.all(np.isfinite(x)))
                amax = math.inf if not finite else float(np.max(np.abs(x))) if x.size else 0.0
                c = cast(x, s, elem)
                cs = scale_of(amax, fp8_max, 0, st["fp8_scale"]) or 1.0
                cc = cast(x, cs, elem)
                step_rec.append({"name": name, "scale": s, "amax": amax,
                                 "history": len(window),
                                 "history_amax": (window[-1] if st["amax_rule"] == "most-recent"
                                                  else max(window)) if window else None,
                                 "c": c, "cur_scale": cs, "cur": cc})
                add(step_sum, c)
                add(step_cur, cc)
                h.append(amax)
            recs.append(step_rec)
            sums.append((step_sum, step_cur))
            add(total, step_sum)
            add(cur_total, step_cur)
        lost = total["saturated"] + total["underflow"]
        out.append({"setting": st, "recs": recs, "sums": sums, "total": total,
                    "cur_total": cur_total, "lost": lost})
    return out


def main():
    d = json.load(open(sys.argv[1]))
    sweep = [a.split("=", 1) for a in sys.argv[2:]]
    got_settings = d["settings"] if "settings" in d else [dict(rank=1, **d)]
    base = dict(got_settings[0]["params"])
    elem = FORMATS[d["format"]]
    if base["fp8_max"] != elem.max:
        fail("fp8_max", base["fp8_max"], elem.max)
    # The combinations, the parameter given last varying fastest.
    settings = []
    for values in itertools.product(*[v.split(",") for _, v in sweep]):
        st = dict(base)
        for (p, _), v in zip(sweep, values):
            key = PARAMS[p]
            st[key] = int(v) if key in ("history", "margin") else v
        settings.append(st)
    match = re.compile(d["match"])
    steps = []
    for s in got_settings[0]["steps"]:
        ts = [(n, x.astype(F32)) for n, x in read_safetensors(s["file"]) if match.search(n)]
        steps.append(ts)
    want = replay(settings, steps, elem)

    def key(i):
        """Fewer lost, then a signal, then the higher SQNR, then the order."""
        t = want[i]["total"]
        if not t["x2"] > 0:
            return (want[i]["lost"], 1, 0.0, i)
        sq = math.inf if t["e2"] == 0 else 10 * math.log10(t["x2"] / t["e2"])
        return (want[i]["lost"], 0, -sq, i)

    order = sorted(range(len(want)), key=key)
    if len(got_settings) != len(want):
        fail("settings", len(got_settings), len(want))
    for rank, (g, i) in enumerate(zip(got_settings, order), 1):
        w = want[i]
        p = {k: v for k, v in g["params"].items() if k != "fp8_max"}
        wp = {k: v for k, v in w["setting"].items() if k != "fp8_max"}
        if p != wp or g["rank"] != rank:
            fail(f"rank {rank}", (g["rank"], p), (rank, wp))
        for gs, recs, (ssum, scur) in zip(g["steps"], w["recs"], w["sums"]):
            if [t["name"] for t in gs["tensors"]] != [r["name"] for r in recs]:
                fail(f"step {gs['step']}: tensors", [t["name"] for t in gs["tensors"]],
                     [r["name"] for r in recs])
            for t, r in zip(gs["tensors"], recs):
                what = f"{wp} step {gs['step']} {t['name']}"
                for k, want_v in (("scale", r["scale"]), ("history", r["history"]),
                                  ("history_amax", r["history_amax"] if r["history_amax"] is None
                                   or math.isfinite(r["history_amax"]) else None),
                                  ("amax", r["amax"] if math.isfinite(r["amax"]) else None)):
                    if t[k] != want_v:
                        fail(f"{what}: {k}", t[k], want_v)
                check_counts(what, t, r["c"])
                if t["current"]["scale"] != r["cur_scale"]:
                    fail(f"{what}: current scale", t["current"]["scale"], r["cur_scale"])
                check_counts(f"{what}: current", t["current"], r["cur"])
            check_counts(f"{wp} step {gs['step']}", gs, ssum)
            check_counts(f"{wp} step {gs['step']}: current", gs["current"], scur)
        check_counts(f"{wp} total", g["total"], w["total"])
        check_counts(f"{wp} total: current", g["total"]["current"], w["cur_total"])
    n = sum(len(r) for r in want[0]["recs"])
    best = want[order[0]]
    print(f"fpscale_numpy: {len(want)} settings x {n} tensors at a step agree; least loss "
          f"{best['setting']} with {best['lost']} elements lost")


if __name__ == "__main__":
    main()
