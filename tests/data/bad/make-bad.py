#!/usr/bin/env python3
"""Writes the malformed-input corpus that tests/check_bad.sh feeds the tools.

Every file here is a dump the readers must reject with exit status 2 and a
one-line message: .npy and safetensors files cut at each section boundary,
headers whose shape times the item size overflows 64 bits, negative or
huge dimensions, data offsets past the end of the file, overlapping
tensors, duplicate names, invalid UTF-8 and JSON, an empty file, raw files
that do not fit their shape.  MANIFEST lists each file, the options to
read it with ("-": none; raw files need --dtype) and the stable part of
the message its rejection must carry.  The symbolic-link loop, the FIFO
and the like cannot be committed; check_bad.sh makes them.

Standard library only; run from anywhere (python3 tests/data/bad/make-bad.py),
it writes next to itself.  The outputs are committed, and check_bad.sh
checks that they are what this script writes.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy_header(text, version=1):
    """The .npy prefix and header TEXT, padded with spaces and '\\n' so that
    the data starts at a multiple of 64, as numpy writes it."""
    lenbytes = 2 if version == 1 else 4
    total = 6 + 2 + lenbytes + len(text) + 1
    text = text + b" " * (-total % 64) + b"\n"
    size = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text


def npy_dict(descr="'<f4'", fortran="False", shape="(3,)"):
    return ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)).encode()


def npy(data=b"\x00" * 12, **fields):
    return npy_header(npy_dict(**fields)) + data


def st_raw(header, data=b""):
    """A safetensors file with HEADER (bytes) as its JSON text."""
    return struct.pack("<Q", len(header)) + header + data


def st(entries, data=b"", metadata=None):
    """ENTRIES: (name, dtype, shape, [begin, end]) or (name, object)."""
    parts = []
    if metadata is not None:
        parts.append('"__metadata__":' + json.dumps(metadata))
    for e in entries:
        if len(e) == 2:
            parts.append(json.dumps(e[0]) + ":" + json.dumps(e[1]))
        else:
            name, dtype, shape, offs = e
            parts.append(json.dumps(name) + ":" + json.dumps(
                {"dtype": dtype, "shape": shape, "data_offsets": offs}))
    return st_raw(("{" + ",".join(parts) + "}").encode(), data)


F32x3 = struct.pack("<3f", 1.0, 2.0, 3.0)
GOOD_NPY = npy(F32x3)
GOOD_ST = st([("a", "F32", [3], [0, 12])], F32x3)
HUGE = 2 ** 62  # x 4 bytes: 2^64
BIG = 2 ** 32


def corpus():
    """(file name, options, message) and the file's bytes."""
    h = npy_header(npy_dict())
    v2 = npy_header(npy_dict(), version=2)
    st_len = GOOD_ST[:8]
    st_text_end = 8 + struct.unpack("<Q", st_len)[0]
    yield ("empty.npy", "-", "file is empty"), b""
    yield ("empty.safetensors", "-", "file is empty"), b""
    # .npy cut at each boundary: magic, version, header length, header, data.
    yield ("npy-cut-in-magic.npy", "-", "too short for the .npy magic and version"), b"\x93NUM"
    yield ("npy-cut-after-magic.npy", "-", "too short for the .npy magic and version"), h[:6]
    yield ("npy-cut-in-version.npy", "-", "too short for the .npy magic and version"), h[:7]
    yield ("npy-cut-in-length.npy", "-", "too short for the 2-byte header length"), h[:9]
    yield ("npy-v2-cut-in-length.npy", "-", "too short for the 4-byte header length"), v2[:11]
    yield ("npy-cut-after-length.npy", "-", "but its header runs to byte"), h[:10]
    yield ("npy-cut-in-header.npy", "-", "but its header runs to byte"), h[:40]
    yield ("npy-cut-before-data.npy", "-", "(short by 12)"), h
    yield ("npy-cut-in-data.npy", "-", "(short by 6)"), h + F32x3[:6]
    yield ("npy-data-too-long.npy", "-", "(long by 4)"), GOOD_NPY + b"\x00" * 4
    # The .npy prefix and header dict.
    yield ("npy-version-4.npy", "-", ".npy version 4.0 at byte 6 is not 1.0, 2.0 or 3.0"), \
        b"\x93NUMPY\x04\x00" + GOOD_NPY[8:]
    yield ("npy-header-length-huge.npy", "-", "exceeds the limit of"), \
        b"\x93NUMPY\x02\x00\xff\xff\xff\xff" + b" " * 64
    yield ("npy-shape-times-itemsize-overflows.npy", "-", "x 4 bytes exceeds 2^64 bytes"), \
        npy(shape="(%d,)" % HUGE)
    yield ("npy-shape-product-overflows.npy", "-", "exceeds 2^64 bytes"), \
        npy(shape="(%d, %d)" % (BIG, BIG + 1))
    yield ("npy-dim-huge.npy", "-", "header promises 4398046511104 bytes"), \
        npy(shape="(%d,)" % 2 ** 40)
    yield ("npy-dim-over-64-bits.npy", "-", "dimension exceeds 2^64-1"), \
        npy(shape="(18446744073709551616,)")
    yield ("npy-dim-negative.npy", "-", "expected a non-negative integer"), npy(shape="(3, -1)")
    yield ("npy-dim-not-integer.npy", "-", "expected ',' or ')'"), npy(shape="(2.5,)")
    yield ("npy-dim-leading-zero.npy", "-", "leading zero"), npy(shape="(03,)")
    yield ("npy-dims-33.npy", "-", "more than 32 dimensions"), \
        npy(b"\x00" * 4, shape="(" + "1, " * 33 + ")")
    yield ("npy-shape-no-comma.npy", "-", "(N) is a number"), npy(shape="(3)")
    yield ("npy-descr-int.npy", "-", "header descr '<i4' is not a supported dtype"), \
        npy(descr="'<i4'")
    yield ("npy-descr-no-order.npy", "-", "gives no byte order"), npy(descr="'|f4'")
    yield ("npy-descr-structured.npy", "-", "is a list (a structured dtype)"), \
        npy(descr="[('a', '<f4')]")
    yield ("npy-descr-ml-dtypes-byte.npy", "-", "is how ml_dtypes saves every 1-byte type"), \
        npy(b"\x00" * 3, descr="'<V1'")
    yield ("npy-key-twice.npy", "-", "header key 'shape' appears twice"), \
        npy_header(b"{'descr': '<f4', 'shape': (3,), 'fortran_order': False, 'shape': (3,), }") \
        + F32x3
    yield ("npy-key-missing.npy", "-", "header has no 'shape' key"), \
        npy_header(b"{'descr': '<f4', 'fortran_order': False, }") + F32x3
    yield ("npy-key-unknown.npy", "-", "header key 'dtype' is not one of"), \
        npy_header(b"{'dtype': '<f4', 'fortran_order': False, 'shape': (3,), }") + F32x3
    yield ("npy-invalid-utf8.npy", "-", "expected a closing quote"), \
        npy_header(b"{'descr': '<f\xc3\x28', 'fortran_order': False, 'shape': (3,), }") + F32x3
    yield ("npy-nul-in-header.npy", "-", "found byte 0x00"), \
        npy_header(b"{'descr': '<f4', \x00'fortran_order': False, 'shape': (3,), }") + F32x3
    yield ("npy-header-not-dict.npy", "-", "expected '{' opening the header dict"), \
        npy_header(b"[('descr', '<f4')]") + F32x3
    yield ("npy-header-trailing.npy", "-", "expected only padding after the header's closing"), \
        npy_header(npy_dict() + b" x") + F32x3
    yield ("npy-bool-invalid.npy", "-", "expected True or False"), npy(F32x3, fortran="Maybe")
    # safetensors cut at each boundary: length, header, data.
    yield ("st-cut-in-length.safetensors", "-", "too short for the 8-byte header length"), \
        GOOD_ST[:5]
    yield ("st-cut-after-length.safetensors", "-", "but its header runs to byte"), GOOD_ST[:8]
    yield ("st-cut-in-header.safetensors", "-", "but its header runs to byte"), GOOD_ST[:30]
    yield ("st-cut-before-data.safetensors", "-", "past the end of the data"), \
        GOOD_ST[:st_text_end]
    yield ("st-cut-in-data.safetensors", "-", "past the end of the data: 6 bytes"), \
        GOOD_ST[:st_text_end + 6]
    # The length and the JSON.
    yield ("st-length-zero.safetensors", "-", "header length 0 at byte 0 is not between 1 and"), \
        b"\x00" * 8 + b"{}"
    yield ("st-length-huge.safetensors", "-", "is not between 1 and"), \
        struct.pack("<Q", 2 ** 63) + b"{}"
    yield ("st-json-invalid.safetensors", "-", "header JSON at byte"), \
        st_raw(b'{"a":{"dtype":"F32",}}  ')
    yield ("st-json-invalid-utf8.safetensors", "-", "header JSON at byte"), \
        st_raw(b'{"a\xff":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}', F32x3)
    yield ("st-json-nul.safetensors", "-", "header JSON at byte"), \
        st_raw(b'{"a\\u0000b":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}', F32x3)
    yield ("st-json-trailing.safetensors", "-", "header JSON at byte"), \
        st_raw(b'{} {}')
    yield ("st-json-deep.safetensors", "-", "maximum parsing depth reached"), \
        st_raw(b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}")
    yield ("st-json-integer-too-big.safetensors", "-", "header JSON at byte"), \
        st_raw(b'{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,18446744073709551616]}}',
               F32x3)
    yield ("st-name-twice.safetensors", "-", "duplicate object key"), \
        st_raw(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
               b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', F32x3[:8])
    yield ("st-not-object.safetensors", "-", "header at byte 8 is not a JSON object"), \
        st_raw(b"[1, 2, 3]")
    yield ("st-tensor-not-object.safetensors", "-", 'tensor "a" is not a JSON object'), \
        st([("a", 5)])
    yield ("st-metadata-not-object.safetensors", "-", "__metadata__ is not a JSON object"), \
        st([("a", "F32", [3], [0, 12])], F32x3, metadata=[1])
    yield ("st-metadata-not-string.safetensors", "-", '__metadata__ "step" is not a string'), \
        st([("a", "F32", [3], [0, 12])], F32x3, metadata={"step": 7})
    # The tensors' fields.
    yield ("st-dtype-missing.safetensors", "-", 'tensor "a" has no string "dtype"'), \
        st([("a", {"shape": [3], "data_offsets": [0, 12]})], F32x3)
    yield ("st-dtype-int.safetensors", "-", 'tensor "a" has dtype "I32"; only'), \
        st([("a", "I32", [3], [0, 12])], F32x3)
    yield ("st-field-unknown.safetensors", "-", 'has the unknown field "strides"'), \
        st([("a", {"dtype": "F32", "shape": [3], "data_offsets": [0, 12], "strides": [4]})],
           F32x3)
    yield ("st-dim-negative.safetensors", "-", "shape dimension 0 not a non-negative integer"), \
        st([("a", "F32", [-3], [0, 12])], F32x3)
    yield ("st-dims-33.safetensors", "-", "a shape of 33 dimensions; at most 32"), \
        st([("a", "F32", [1] * 33, [0, 4])], F32x3[:4])
    yield ("st-shape-times-itemsize-overflows.safetensors", "-", "x 4 bytes, over 2^64 bytes"), \
        st([("a", "F32", [HUGE], [0, 12])], F32x3)
    yield ("st-shape-product-overflows.safetensors", "-", "over 2^64 bytes"), \
        st([("a", "F64", [BIG, BIG], [0, 12])], F32x3)
    yield ("st-offsets-reversed.safetensors", "-", 'needs "data_offsets" [begin, end]'), \
        st([("a", "F32", [3], [12, 0])], F32x3)
    yield ("st-offsets-negative.safetensors", "-", 'needs "data_offsets" [begin, end]'), \
        st([("a", "F32", [3], [-12, 0])], F32x3)
    yield ("st-offsets-wrong-size.safetensors", "-", "but shape [3] x 4 bytes needs 12"), \
        st([("a", "F32", [3], [0, 8])], F32x3)
    yield ("st-offsets-past-eof.safetensors", "-", "past the end of the data"), \
        st([("a", "F32", [3], [0, 12]), ("b", "F32", [1], [1000000, 1000004])], F32x3)
    yield ("st-offsets-huge.safetensors", "-", "past the end of the data"), \
        st([("a", "F32", [2 ** 40], [2 ** 62, 2 ** 62 + 2 ** 42])], F32x3)
    yield ("st-tensors-overlap.safetensors", "-", 'tensors "a" [0, 8] and "b" [4, 12] overlap'), \
        st([("a", "F32", [2], [0, 8]), ("b", "F32", [2], [4, 12])], F32x3)
    # Neither kind, and raw files that do not fit their options.
    yield ("unknown-kind.bin", "-", "neither a .npy file"), b"\x7fELF not a dump at all\n"
    # what people give instead of a dump, named for what it is
    yield ("torch-zip.pt", "-", "a zip file, as torch.save writes"), b"PK\x03\x04 a zip\n"
    yield ("torch-legacy.pt", "-", "a pickle"), b"\x80\x02 a pickle\n"
    yield ("model.safetensors.index.json", "-", "the index of a sharded safetensors model"), \
        b'{"metadata": {}, "weight_map": {}}\n'
    yield ("raw-not-whole-elements.raw", "--dtype f32",
           "file is 7 bytes, not a whole number of 4-byte f32 elements"), F32x3[:7]
    yield ("raw-shape-mismatch.raw", "--dtype f16 --shape 2,3",
           "raw shape [2, 3] does not hold the file's 5 f16 elements"), b"\x00\x3c" * 5
    yield ("raw-shape-overflows.raw", "--dtype f64 --shape 4294967296,4294967296",
           "does not hold the file's 1 f64 elements"), b"\x00" * 8


def main():
    lines = ["# Written by make-bad.py: FILE, the options it is read with, and the",
             "# stable part of the message rejecting it, separated by tabs."]
    names = set()
    for (name, opts, msg), data in corpus():
        assert name not in names, name
        names.add(name)
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        lines.append("\t".join((name, opts, msg)))
    with open(os.path.join(HERE, "MANIFEST"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
