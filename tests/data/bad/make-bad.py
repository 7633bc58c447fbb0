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
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def zip_bytes(members, method=zipfile.ZIP_STORED):
    """A zip archive of MEMBERS [(name, bytes)], stored, dated 1980: the
    same bytes on every run."""
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method if name.endswith("data.pkl") else zipfile.ZIP_STORED
            z.writestr(info, data)
    return buf.getvalue()


def pk_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def pk_int(i):
    if 0 <= i < 256:
        return b"K" + bytes([i])
    if -2 ** 31 <= i < 2 ** 31:
        return b"J" + struct.pack("<i", i)
    n = (i.bit_length() + 8) // 8
    return b"\x8a" + bytes([n]) + i.to_bytes(n, "little", signed=True)


def pk_tuple(items):
    return b"(" + b"".join(items) + b"t"


def pk_tensor(key="0", numel=3, offset=0, size=(3,), stride=(1,), storage="FloatStorage"):
    """A call of _rebuild_tensor_v2 on storage KEY, as torch.save pickles it."""
    pid = pk_tuple([pk_str("storage"), b"ctorch\n" + storage.encode() + b"\n", pk_str(key),
                    pk_str("cpu"), pk_int(numel)])
    return (b"ctorch._utils\n_rebuild_tensor_v2\n" +
            pk_tuple([pid + b"Q", pk_int(offset), pk_tuple([pk_int(x) for x in size]),
                      pk_tuple([pk_int(x) for x in stride]), b"\x89",
                      b"ccollections\nOrderedDict\n)R"]) + b"R")


def pk_state(body):
    """A pickle of the dict {"w": BODY}."""
    return b"\x80\x02}(" + pk_str("w") + body + b"u."


def torch_file(pickle, storages=(("0", b"\x00" * 12),), more=()):
    return zip_bytes([("archive/data.pkl", pickle)] +
                     [("archive/data/" + k, v) for k, v in storages] + list(more))


GOOD_PT_PICKLE = pk_state(pk_tensor())
GOOD_PT = torch_file(GOOD_PT_PICKLE)
LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


def patch_zip(data, name, **fields):
    """DATA with the local and central headers of member NAME changed:
    flags, method, size (uncompressed)."""
    out = bytearray(data)
    b = name.encode()
    at = 0
    while True:
        at = out.find(b, at)
        if at < 0:
            return bytes(out)
        for sig, base, fl, me, us in ((b"PK\x03\x04", at - 30, 6, 8, 22),
                                      (b"PK\x01\x02", at - 46, 8, 10, 24)):
            if base >= 0 and out[base:base + 4] == sig:
                if "flags" in fields:
                    out[base + fl:base + fl + 2] = struct.pack("<H", fields["flags"])
                if "method" in fields:
                    out[base + me:base + me + 2] = struct.pack("<H", fields["method"])
                if "size" in fields:
                    out[base + us:base + us + 4] = struct.pack("<I", fields["size"])
        at += len(b)


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
    yield ("st-dtype-unknown.safetensors", "-", 'tensor "a" has dtype "F6_E2M3", which'), \
        st([("a", "F6_E2M3", [3], [0, 12])], F32x3)
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
    yield ("torch-legacy.pt", "-", "a torch.save file of the legacy format"), \
        LEGACY_MAGIC + b" and more pickles"
    yield ("pickle.pkl", "-", "a bare pickle, not a torch.save file"), b"\x80\x02 a pickle\n"
    # torch.save's zip archives
    yield ("zip-garbage.pt", "-", "not a valid zip archive"), b"PK\x03\x04 a zip\n"
    cut = GOOD_PT[:-10]
    yield ("zip-cut-central-directory.pt", "-", "not a valid zip archive"), cut
    eocd = GOOD_PT.rfind(b"PK\x05\x06")
    yield ("zip-bad-central-directory.pt", "-", "not a valid zip archive"), \
        GOOD_PT[:eocd + 16] + struct.pack("<I", 7) + GOOD_PT[eocd + 20:]
    yield ("zip-encrypted.pt", "-", 'zip member "archive/data.pkl" is encrypted'), \
        patch_zip(GOOD_PT, "archive/data.pkl", flags=1)
    yield ("zip-unknown-method.pt", "-", "is compressed with method 77"), \
        patch_zip(GOOD_PT, "archive/data.pkl", method=77)
    bomb = zip_bytes([("archive/data.pkl", GOOD_PT_PICKLE + b"\x00" * (1 << 20)),
                      ("archive/data/0", b"\x00" * 12)], zipfile.ZIP_DEFLATED)
    yield ("zip-bomb.pt", "-", "inflates past its declared 137 bytes"), \
        patch_zip(bomb, "archive/data.pkl", size=len(GOOD_PT_PICKLE))
    yield ("zip-no-data-pkl.pt", "-", "a zip file without ARCHIVE/data.pkl"), \
        zip_bytes([("archive/version", b"3\n")])
    yield ("zip-torchscript.pt", "-", "a TorchScript archive"), \
        zip_bytes([("m/constants.pkl", b"\x80\x02)."), ("m/code/m.py", b"")])
    yield ("zip-compressed-storage.pt", "-", "torch.save stores tensor data uncompressed"), \
        patch_zip(GOOD_PT, "archive/data/0", method=8)
    yield ("zip-byteorder.pt", "-", 'byteorder "middle" is neither'), \
        torch_file(GOOD_PT_PICKLE, more=[("archive/byteorder", b"middle")])
    # the pickle: only what torch.save writes, within limits
    yield ("pk-global-unknown.pt", "-", "the global os.system is not one torch.save writes"), \
        torch_file(b"\x80\x02cos\nsystem\n" + pk_tuple([pk_str("echo")]) + b"R.")
    yield ("pk-opcode-inst.pt", "-", "opcode 'i' is not one torch.save writes"), \
        torch_file(b"\x80\x02(ios\nsystem\n.")
    yield ("pk-protocol-1.pt", "-", "pickle protocol 0 or 1"), torch_file(b"\x80\x01N.")
    yield ("pk-marks-deep.pt", "-", "MARKs nested deeper than the limit"), \
        torch_file(b"\x80\x02" + b"(" * 1000 + b"N.")
    nest = b"}" + b"\x85" * 5000
    yield ("pk-nested-deep.pt", "-", "nested more than 200 deep"), \
        torch_file(b"\x80\x02" + nest + b".")
    laughs = b"\x80\x02]q\x000" + b"".join(
        b"(h" + bytes([i]) + b"h" + bytes([i]) + b"lq" + bytes([i + 1]) + b"0"
        for i in range(40)) + b"h\x28."
    yield ("pk-shared-bomb.pt", "-", "shared more often than a torch.save file"), \
        torch_file(laughs)
    yield ("pk-no-stop.pt", "-", "the pickle ends without STOP"), torch_file(b"\x80\x02N")
    yield ("pk-string-past-end.pt", "-", "a string runs past the end of the pickle"), \
        torch_file(b"\x80\x02X\xff\x00\x00\x00abc.")
    yield ("pk-memo-missing.pt", "-", "GET of memo 5, never put"), torch_file(b"\x80\x02h\x05.")
    yield ("pk-long-too-big.pt", "-", "an integer of more than 64 bits"), \
        torch_file(b"\x80\x02\x8a\x09" + b"\x01" * 9 + b".")
    yield ("pk-stack-empty.pt", "-", "STOP leaves nothing on the stack"), torch_file(b"\x80\x02.")
    yield ("pk-reduce-not-global.pt", "-", "REDUCE of something that is not a global"), \
        torch_file(b"\x80\x02N)R.")
    yield ("pk-storage-past-end.pt", "-", "its elements reach element 9 of a storage of 3"), \
        torch_file(pk_state(pk_tensor(size=(10,))))
    yield ("pk-stride-negative.pt", "-", "its stride is not a tuple of non-negative integers"), \
        torch_file(pk_state(pk_tensor(stride=(-1,))))
    yield ("pk-size-overflows.pt", "-", "its size's product exceeds 2^64"), \
        torch_file(pk_state(pk_tensor(size=(2 ** 40, 2 ** 40), stride=(1, 1))))
    yield ("pk-stride-overflows.pt", "-", "its size and stride overflow 64 bits"), \
        torch_file(pk_state(pk_tensor(size=(5,), stride=(2 ** 62,))))
    yield ("pk-storage-missing.pt", "-", 'has no member data/9 in the archive'), \
        torch_file(pk_state(pk_tensor(key="9")))
    yield ("pk-storage-larger.pt", "-", "is larger than its member's 12 bytes"), \
        torch_file(pk_state(pk_tensor(numel=1000)))
    # sharded models' indexes (in folders of their own, beside their shards)
    one = st([("a", "F32", [3], [0, 12])], F32x3)
    two = st([("b", "F32", [3], [0, 12])], F32x3)
    def index(weight_map):
        return json.dumps({"metadata": {}, "weight_map": weight_map}).encode()
    yield ("idx-missing/model.safetensors.index.json", "-", "gone.safetensors: cannot open"), \
        index({"a": "gone.safetensors"})
    yield ("idx-twice/s1.safetensors", None, None), one
    yield ("idx-twice/s2.safetensors", None, None), one
    yield ("idx-twice/model.safetensors.index.json", "-", 'tensor "a" is in two shards'), \
        index({"a": "s1.safetensors", "b": "s2.safetensors"})
    yield ("idx-leaves/model.safetensors.index.json", "-", "leaves the index's directory"), \
        index({"a": "../st-tensors-overlap.safetensors"})
    yield ("idx-absolute/model.safetensors.index.json", "-", "leaves the index's directory"), \
        index({"a": "/etc/passwd"})
    yield ("idx-elsewhere/s1.safetensors", None, None), one
    yield ("idx-elsewhere/s2.safetensors", None, None), two
    yield ("idx-elsewhere/model.safetensors.index.json", "-", "which does not hold it"), \
        index({"a": "s2.safetensors", "b": "s1.safetensors"})
    yield ("idx-unlisted/s1.safetensors", None, None), \
        st([("a", "F32", [3], [0, 12]), ("c", "F32", [0], [12, 12])], F32x3)
    yield ("idx-unlisted/s2.safetensors", None, None), two
    yield ("idx-unlisted/model.safetensors.index.json", "-", "which the index does not list"), \
        index({"a": "s1.safetensors", "b": "s2.safetensors"})
    yield ("idx-no-map.safetensors.index.json", "-", 'the index has no "weight_map" object'), \
        b'{"metadata": {}}'
    yield ("idx-not-json.safetensors.index.json", "-", "JSON at byte"), b'{"weight_map": '
    yield ("idx-not-a-name.safetensors.index.json", "-", "maps to something not a file name"), \
        b'{"weight_map": {"a": 5}}'
    yield ("st-f4-odd.safetensors", "-", "an odd number of elements"), \
        st([("a", "F4", [3], [0, 2])], b"\x00\x00")
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
        path = os.path.join(HERE, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        if opts is not None:  # (a shard, read through its index)
            lines.append("\t".join((name, opts, msg)))
    with open(os.path.join(HERE, "MANIFEST"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
