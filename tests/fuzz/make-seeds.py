#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets, tests/fuzz/corpus/TARGET/seed-*.

Standard library only; run from anywhere (python3 tests/fuzz/make-seeds.py),
it writes next to itself.  The seeds are committed; rerun to change them.
The other files of the corpus, crash-* and the like, are inputs that once
broke a target, kept so that make check replays them; this script never
touches them.  The byte layouts are those of tests/fuzz/fuzz.h.
"""
import io
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def npy(descr, shape, data, version=1, fortran=False):
    """A .npy file as numpy writes it: the dict padded to 64 bytes."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    head = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    lenbytes = 2 if version == 1 else 4
    total = 6 + 2 + lenbytes + len(head) + 1
    head += " " * (-total % 64) + "\n"
    size = struct.pack("<H" if version == 1 else "<I", len(head))
    return b"\x93NUMPY" + bytes([version, 0]) + size + head.encode() + data


def safetensors(tensors, metadata=None):
    """TENSORS: (name, dtype, shape, bytes) in file order."""
    header, blob = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blob


def stats(fmt_names, hist_min, counts, zeros, nonfinite, amax, rnd="rne", scale=1.0):
    return json.dumps({
        "round": rnd, "scale": scale, "ftz": False, "saturate": False,
        "count": zeros + nonfinite + sum(counts), "zeros": zeros,
        "nonfinite": nonfinite, "amax": amax,
        "log2_hist": {"min": hist_min, "counts": counts},
        "formats": {n: {"underflow": 0, "subnormal": 0, "overflow": 0} for n in fmt_names},
    }, separators=(",", ":")).encode()


def seeds():
    f32 = struct.pack("<4f", 1.0, -2.5, 0.0, 3e-8)
    out = {"npy": {}, "safetensors": {}, "shape": {}, "format_lookup": {}, "parse": {},
           "stats_json": {}, "torch": {}, "pickle": {}, "index": {}}
    # torch.save files as torch writes them, their pickles, and the
    # malformed ones of tests/data/bad
    torch_dir = os.path.join(DATA, "checkpoints", "torch")
    for name in sorted(os.listdir(torch_dir)):
        if name.endswith(".pt"):
            data = open(os.path.join(torch_dir, name), "rb").read()
            out["torch"]["seed-" + name] = data
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
                out["pickle"]["seed-" + name[:-3] + ".pkl"] = z.read(pkl)
    bad = os.path.join(DATA, "bad")
    for name in sorted(os.listdir(bad)):
        if name.endswith(".pt") and (name.startswith("zip-") or name.startswith("pk-")):
            out["torch"]["seed-bad-" + name] = open(os.path.join(bad, name), "rb").read()
    # a tensor of storage "0" (64 bytes), as fuzz_pickle's archive holds it
    tensor = (b"ctorch._utils\n_rebuild_tensor_v2\n(((X\x07\x00\x00\x00storage"
              b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x10tQ"
              b"K\x02K\x02K\x03\x86K\x04K\x01\x86\x89ccollections\nOrderedDict\n)RtR")
    out["pickle"].update({
        "seed-dict": b"\x80\x02}(X\x01\x00\x00\x00w" + tensor + b"u.",
        "seed-list": b"\x80\x02](" + tensor + b"h\x00e.",
        "seed-memo": b"\x80\x02]q\x00(h\x00h\x00e.",
        "seed-proto4": b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94N\x94s.",
    })
    out["index"].update({
        "seed-both": json.dumps({"metadata": {"total_size": 10},
                                 "weight_map": {"a": "shard.safetensors",
                                                "b": "shard.safetensors"}}).encode(),
        "seed-missing": json.dumps({"weight_map": {"a": "gone.safetensors"}}).encode(),
        "seed-one": json.dumps({"weight_map": {"a": "shard.safetensors"}}).encode(),
        "seed-up": json.dumps({"weight_map": {"a": "../shard.safetensors"}}).encode(),
    })
    for name in sorted(os.listdir(DATA)):
        path = os.path.join(DATA, name)
        if name.endswith(".npy"):
            out["npy"]["seed-" + name] = open(path, "rb").read()
        elif name.endswith(".safetensors"):
            out["safetensors"]["seed-" + name] = open(path, "rb").read()
    out["npy"].update({
        "seed-f32-2x2.npy": npy("<f4", (2, 2), f32),
        "seed-f64-v2.npy": npy(">f8", (1,), struct.pack(">d", 0.1), version=2),
        "seed-f16-v3-fortran.npy": npy("<f2", (2, 1), b"\x00\x3c\x00\xbc", 3, True),
        "seed-bf16-empty.npy": npy("<V2", (0, 5), b""),
        "seed-e5m2-scalar.npy": npy("|f1", (), b"\x7b"),
    })
    out["safetensors"].update({
        "seed-all-dtypes.safetensors": safetensors([
            ("f64", "F64", [1], struct.pack("<d", -0.0)),
            ("f32", "F32", [2, 2], f32),
            ("f16", "F16", [2], b"\x00\x7c\x01\x00"),
            ("bf16", "BF16", [1, 1], b"\x80\x3f"),
            ("e4m3", "F8_E4M3", [3], b"\x7e\x7f\x01"),
            ("e5m2", "F8_E5M2", [0], b""),
        ], {"step": "42", "loss_scale": "65536"}),
        "seed-scalar.safetensors": safetensors([("loss", "F32", [], struct.pack("<f", 0.5))]),
        "seed-empty.safetensors": safetensors([]),
    })
    out["shape"].update({
        "seed-2x2-f32": b"2,2\n\x01" + f32,
        "seed-4-f32-be": b"4\n\x81" + struct.pack(">4f", 1, 2, 3, 4),
        "seed-whole-f16": b"3\n\x42" + b"\x00\x3c" * 3,
        "seed-zero-dim": b"0,7\n\x04",
        "seed-bad-dtype": b"1\n\x06\x00",
        "seed-deep": b"1,1,1,1,1,1,1,1\n\x05\x38",
        "seed-huge": b"18446744073709551615,2\n\x00",
    })
    names = ["fp64", "binary32", "single", "tf32", "TensorFloat32", "fp16", "half", "bf16",
             "bfloat16", "e4m3", "E4M3FN", "float8_e4m3fn", "e5m2", "float8_e5m2", "e5m10",
             "e11m52", "e1m0", "E8M0", "e3m2", "e12m3", "e0m3", "e3m53", "e05m2", "fp", ""]
    for i, name in enumerate(names):
        out["format_lookup"]["seed-%02d" % i] = name.encode()
    texts = ["1.5", "-0x1.8p-3", "inf", "-Infinity", "NaN", "1e-99999999999", "1e400",
             "65520", "0X.8P1", "464", ".5", "5.", "-0", "0x10", "3.14159265358979323846264338",
             "2.2250738585072011e-308", "0x1p-1074", "1e", "0x", "+", "1..2",
             "2^-24", "-2^-24", "3*2^-10", "1.5*2^-3", "2^99999999999999999999",
             "-0*2^-99999999999999999999", ".5*2^1", "2^", "2^x", "3*2^", "3*", "1e3*2^4"]
    for i, text in enumerate(texts):
        out["parse"]["seed-%02d" % i] = bytes([i % 14, (i * 37) % 128]) + text.encode()
    out["stats_json"].update({
        "seed-small": stats(["fp16", "e4m3"], -1, [1, 1, 1], 1, 1, 3.0),
        "seed-empty": stats(["bf16"], 0, [], 0, 0, 0.0, "sr", 2.0 ** 15),
        "seed-tiny": stats(["e5m2", "e3m2"], -1074, [2], 0, 0, 5e-324, "rod"),
    })
    return out


def main():
    for target, files in seeds().items():
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
