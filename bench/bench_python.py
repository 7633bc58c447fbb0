"""fpkit for Python against the C library's own time for the same calls,
and against ml_dtypes' astype, on 2^26 float32 elements of gradient data.

    bench_python.py BENCH_PYTHON SAMPLE_DIR

BENCH_PYTHON is bench/bench_python (the C side, the same calls through
libfpkit alone); SAMPLE_DIR the bundled sample dump.  The data, made here
and handed to the C side in a file: the gradients and activation
gradients of the sample, resampled to 2^26 elements, each taking the sign
and exponent of one drawn at random and random significand bits (zeros
stay zeros), as bench/bench_bulk makes its data.  Each figure is the best
of REPS runs, in CPU time on one thread and in wall time on the CPUs this
process may use, the C program and Python taking turns; the ratio is Python's time over C's (make bench runs it
with the extension built against the build tree).  The C side allocates
its memory as NumPy does (malloc, and huge pages asked for), the new
array of each quantize call too; out= writes into an array written
before, as the C side's second row does."""

import glob
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

import fpkit

N = 1 << 26
REPS = 7


def gradients(sample):
    vals = []
    for path in sorted(glob.glob(os.path.join(sample, "*.safetensors"))):
        with open(path, "rb") as f:
            b = f.read()
        (n,) = struct.unpack("<Q", b[:8])
        for k, v in json.loads(b[8:8 + n]).items():
            if k.startswith(("grad/", "actgrad/")) and v["dtype"] == "F32":
                lo, hi = v["data_offsets"]
                vals.append(np.frombuffer(b[8 + n + lo:8 + n + hi], "<f4"))
    return np.concatenate(vals)


def make_data(sample):
    rng = np.random.default_rng(20240611)
    pool = gradients(sample).view(np.uint32)
    pick = pool[rng.integers(0, pool.size, N)]
    sig = rng.integers(0, 1 << 23, N, dtype=np.uint32)
    x = (pick & np.uint32(0xFF800000)) | sig
    x[pick & np.uint32(0x7FFFFFFF) == 0] = pick[pick & np.uint32(0x7FFFFFFF) == 0]
    return x.view(np.float32)


def once(fn, threads=1):
    """Seconds of one run of FN: of this thread's CPU time when it runs on
    one thread (the machine may be shared), else of wall time."""
    clock = time.thread_time if threads == 1 else time.perf_counter
    t0 = clock()
    fn()
    return clock() - t0


def best(fn, threads=1):
    """The best of REPS runs of FN."""
    return min(once(fn, threads) for _ in range(REPS))


def main():
    bench, sample = sys.argv[1], sys.argv[2]
    x = make_data(sample)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    with open("/proc/loadavg") as f:
        print(f"bench_python: load average before: {f.read().split()[:3]} ({cpus} CPUs), "
              f"fpkit {fpkit.__version__}, kernels {fpkit.isa()}, numpy {np.__version__}")
    with tempfile.NamedTemporaryFile(suffix=".f32") as f:
        x.tofile(f.name)
        for threads in sorted({1, cpus}):
            buf = np.zeros_like(x)
            calls = {
                "quantize-new": lambda: fpkit.quantize(x, "bf16", threads=threads),
                "quantize-out": lambda: fpkit.quantize(x, "bf16", out=buf, threads=threads),
                "stats": lambda: fpkit.stats(x, threads=threads),
                "stats-nosqnr": lambda: fpkit.stats(x, sqnr=False, threads=threads),
            }
            # C and Python take turns, each keeping its best: load that
            # comes and goes on a shared machine reaches both alike
            c = dict.fromkeys(calls, 1e30)
            py = dict.fromkeys(calls, 1e30)
            for _ in range(REPS):
                out = subprocess.run([bench, f.name, str(threads), "1"], capture_output=True,
                                     text=True, check=True).stdout
                for line in out.splitlines():
                    k, v = line.split()
                    c[k] = min(c[k], float(v))
                for k, fn in calls.items():
                    py[k] = min(py[k], once(fn, threads))
            print(f"threads {threads} ({'CPU' if threads == 1 else 'wall'} time):")
            print(f"  {'call':<44} {'C s':>8} {'Python s':>9} {'ratio':>6}")
            for k, label in (("quantize-new", 'fpkit.quantize(x, "bf16")'),
                             ("quantize-out", 'fpkit.quantize(x, "bf16", out=buf)'),
                             ("stats", "fpkit.stats(x)"),
                             ("stats-nosqnr", "fpkit.stats(x, sqnr=False)")):
                print(f"  {label:<44} {c[k]:>8.4f} {py[k]:>9.4f} {py[k] / c[k]:>6.2f}")
    try:
        import ml_dtypes
    except ImportError:
        print("ml_dtypes is not installed: its astype is not timed")
        return
    t_enc = best(lambda: x.astype(ml_dtypes.bfloat16))
    t_fq = best(lambda: x.astype(ml_dtypes.bfloat16).astype(np.float32))
    t_f16 = best(lambda: x.astype(np.float16))
    print(f"ml_dtypes {ml_dtypes.__version__}, one thread (CPU time):")
    print(f"  x.astype(bfloat16)                           {t_enc:.4f} s")
    print(f"  x.astype(bfloat16).astype(float32)           {t_fq:.4f} s (fake quantisation)")
    print(f"  x.astype(numpy.float16)                      {t_f16:.4f} s")
    print(f"  fpkit.encode(x, \"bf16\", threads=1)           "
          f"{best(lambda: fpkit.encode(x, 'bf16', threads=1)):.4f} s")


if __name__ == "__main__":
    main()
