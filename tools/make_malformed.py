#!/usr/bin/python3
"""Writes tests/malformed/: small hand-made malformed .pt2 archives, each
built from a committed fixture with exactly one thing broken, and
tests/malformed/expected.txt, the error each must produce.

    /usr/bin/python3 tools/make_malformed.py      (or: make malformed)

tests/malformed/malformed_test.cpp loads every file listed and checks that
read_pt2 (or, for files that load, verify) fails with a message that names
the file and contains the expected text. The archives are written with the
small zip forger below rather than zipfile, so that sizes, offsets, names and
counts can lie exactly as an attacker's would.
"""
import io
import json
import os
import struct
import sys
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "malformed")

# ---------------------------------------------------------------- zip forger


class E:
    """One entry. `data` is what is stored (already compressed for method 8
    unless `deflate` is set). Any of the header fields can be overridden."""

    def __init__(self, name, data, method=0, deflate=False, **over):
        self.name = name.encode() if isinstance(name, str) else name
        self.raw = data
        self.method = method
        if deflate:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            self.data = c.compress(data) + c.flush()
            self.method = 8
        else:
            self.data = data
        self.over = over

    def get(self, key, default):
        return self.over.get(key, default)


def local_header(e, lname=None, flags=0, crc=None, csize=None, usize=None):
    lname = e.name if lname is None else lname
    crc = zlib.crc32(e.raw) & 0xFFFFFFFF if crc is None else crc
    csize = len(e.data) if csize is None else csize
    usize = len(e.raw) if usize is None else usize
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, e.method, 0, 0x21, crc,
                       min(csize, 0xFFFFFFFF), min(usize, 0xFFFFFFFF), len(lname), 0) + lname


def forge(entries, **over):
    """A zip: local headers + data, central directory, end record. `over`
    may replace the end record's count / cd_size / cd_offset. An entry with
    central_only=True has no local header of its own: its `lho` points
    wherever the forger wants (inside another entry's data)."""
    out = bytearray()
    central = bytearray()
    for e in entries:
        crc = e.get("crc", zlib.crc32(e.raw) & 0xFFFFFFFF)
        csize = e.get("csize", len(e.data))
        usize = e.get("size", len(e.raw))
        flags = e.get("flags", 0)
        offset = e.get("lho", len(out))
        if not e.get("central_only", False):
            out += local_header(e, e.get("local_name", e.name), flags, crc, csize, usize) + e.data
        extra = e.get("extra", b"")
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, e.method, 0, 0x21,
                               crc, min(csize, 0xFFFFFFFF), min(usize, 0xFFFFFFFF), len(e.name), len(extra),
                               0, 0, 0, 0, min(offset, 0xFFFFFFFF))
        central += e.name + extra
    cd_offset = len(out)
    out += central
    n = over.get("count", len(entries))
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, over.get("cd_size", len(central)),
                       over.get("cd_offset", cd_offset), 0)
    return bytes(out)


def zip64_extra(*values):
    body = b"".join(struct.pack("<Q", v) for v in values)
    return struct.pack("<HH", 1, len(body)) + body


# ---------------------------------------------------------------- fixtures


def records(path):
    with zipfile.ZipFile(os.path.join(ROOT, path)) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def compact(data):
    return json.dumps(json.loads(data), separators=(",", ":")).encode()


SIMPLE = records("fixtures/simple_linear.pt2")
SIMPLE_28 = records("fixtures/pt2-2.8/simple_linear.pt2")
SIMPLE_LEGACY = records("fixtures/legacy-2.4/simple_linear.pt2")
TOP = "simple_linear/"
# x: [s77, 4] with s77 in [2, 64], no weights (a small file).
SYMBOLIC = records("fixtures/constructs/symbolic.pt2")


# Records no reader needs, left out to keep the files small.
UNNEEDED = {"data/sample_inputs/model.pt", ".data/serialization_id", "serialized_example_inputs.pt"}


def archive(recs, edits=None, drop=(), add=(), deflate=(), top=TOP):
    """A fixture's records, JSON compacted (smaller files, exact patterns),
    with `edits` {relative name: fn(bytes) -> bytes} applied and the records
    named in `deflate` DEFLATE-compressed. `top`: the fixture's folder."""
    edits = edits or {}
    out = []
    for name, data in recs:
        rel = name[len(top):] if name.startswith(top) else name
        if rel in drop or rel in UNNEEDED:
            continue
        if name.endswith(".json") and data[:1] == b"{":
            data = compact(data)
        if rel in edits:
            data = edits[rel](data)
        out.append(E(name, data, deflate=rel in deflate))
    out += list(add)
    return out


def sub(old, new, count=1):
    def f(data):
        if old.encode() not in data:
            sys.exit("pattern not found: " + old)
        return data.replace(old.encode(), new.encode(), count)
    return f


def wc_name():
    return "data/weights/model_weights_config.json"


def model_json():
    return dict(SIMPLE)[TOP + "models/model.json"]


# ------------------------------------------------------------- pickles


def torch_save(pkl, storages=(), folder="archive"):
    """A torch.save zip: data.pkl, byteorder, data/<key> records, version."""
    entries = [E(folder + "/data.pkl", pkl), E(folder + "/byteorder", b"little")]
    entries += [E(folder + "/data/" + k, v) for k, v in storages]
    entries.append(E(folder + "/version", b"3\n"))
    return forge(entries)


def with_weights_pickle(pkl, storages=()):
    """pt2-2.8 simple_linear with data/weights/model.pt replaced."""
    blob = torch_save(pkl, storages)
    return archive(SIMPLE_28, {"data/weights/model.pt": lambda _: blob})


def p_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


PROTO = b"\x80\x02"
STORAGE_PID = lambda key, numel, storage_type=b"FloatStorage": (  # noqa: E731
    b"(" + p_str("storage") + b"ctorch\n" + storage_type + b"\n" + p_str(key) + p_str("cpu") +
    b"J" + struct.pack("<i", numel) + b"tQ")


def rebuild(key, numel, offset, sizes, strides):
    tup = lambda xs: b"(" + b"".join(b"J" + struct.pack("<i", x) for x in xs) + b"t"  # noqa: E731
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + STORAGE_PID(key, numel) + b"J" + struct.pack("<i", offset) +
            tup(sizes) + tup(strides) + b"\x89}tR")


def state_dict(*items):
    body = b"".join(p_str(k) + v for k, v in items)
    return PROTO + b"ccollections\nOrderedDict\n)R(" + body + b"u."


# ---------------------------------------------------------------- the cases

CASES = []  # (file, bytes, expected substring)


def case(name, data, expected):
    if isinstance(data, list):
        data = forge(data)
    CASES.append((name, data, expected))


def build():
    good = forge(archive(SIMPLE))
    good_entries = archive(SIMPLE)

    # --- the container ---------------------------------------------------
    case("zip_empty_file.pt2", b"", "too small for an end-of-central-directory record")
    case("zip_not_a_zip.pt2", b"this is a text file, not an archive\n" * 2,
         "no end-of-central-directory record")
    case("zip_truncated.pt2", good[: len(good) // 2], "no end-of-central-directory record")
    case("zip_name_dotdot.pt2", archive(SIMPLE, add=[E(TOP + "extra/../../../etc/passwd", b"x")]),
         "the name has a '..' path component")
    case("zip_name_absolute.pt2", archive(SIMPLE, add=[E("/etc/passwd", b"x")]), "the name is an absolute path")
    case("zip_name_backslash.pt2", archive(SIMPLE, add=[E(TOP + "extra\\..\\x", b"x")]),
         "the name contains a backslash")
    case("zip_name_drive_letter.pt2", archive(SIMPLE, add=[E("C:/Windows/x", b"x")]),
         "the name starts with a drive letter")
    case("zip_name_nul.pt2", archive(SIMPLE, add=[E(TOP.encode() + b"extra/a\0b", b"x")]),
         "the name contains a NUL byte")
    case("zip_duplicate_entry.pt2",
         archive(SIMPLE, add=[E(TOP + "models/model.json", b'{"evil": true}')]),
         "duplicate entry name 'simple_linear/models/model.json'")
    # The classic overlapping bomb: entry b's local header and data sit
    # inside entry a's data, so one set of bytes is read twice.
    b = E(TOP + "extra/b", b"B" * 10)
    a_name = TOP + "extra/a"
    pad = b"A" * 16
    a = E(a_name, pad + local_header(b) + b.data + b"A" * 16)
    b.over.update(central_only=True, lho=30 + len(a_name) + len(pad))
    case("zip_overlapping_entries.pt2", [a, b], "overlaps entry 'simple_linear/extra/b'")
    case("zip_entry_count_lie.pt2", forge(good_entries, count=0xFFFF),
         "the archive claims 65535 entries, but its central directory")
    case("zip_central_directory_past_end.pt2", forge(good_entries, cd_offset=0x7FFFFFF0),
         "extends past the end-of-central-directory record")
    case("zip_data_past_end.pt2", archive(SIMPLE, add=[E(TOP + "extra/big", b"x" * 16, csize=1 << 30, size=1 << 30)]),
         "extends past the end of the file")
    case("zip_local_name_mismatch.pt2",
         archive(SIMPLE, add=[E(TOP + "extra/x", b"x", local_name=b"simple_linear/extra/y")]),
         "names 'simple_linear/extra/y' instead")
    case("zip_encrypted_entry.pt2", archive(SIMPLE, add=[E(TOP + "extra/x", b"x", flags=1)]),
         "the entry is encrypted")
    case("zip_unsupported_method.pt2", archive(SIMPLE, add=[E(TOP + "extra/x", b"BZh91AY", method=12)]),
         "compression method 12 is not supported")
    case("zip_zip64_extra_too_short.pt2",
         archive(SIMPLE, add=[E(TOP + "extra/x", b"x", size=0xFFFFFFFF, extra=struct.pack("<HH", 1, 0))]),
         "the zip64 extra field is 0 bytes, too short")
    bad_crc = archive(SIMPLE)
    for e in bad_crc:
        if e.name.endswith(b"models/model.json"):
            e.over["crc"] = 0x12345678
    case("zip_json_crc_mismatch.pt2", bad_crc, "CRC-32 mismatch")
    # Zip bombs: DEFLATE entries that claim (or inflate to) far more than
    # they hold. The ratio check refuses the claim before allocating. They
    # sit in extra/, which is read only when copied ("write: ..." cases).
    bomb = E(TOP + "extra/bomb", b"\0" * 4096, deflate=True)
    bomb.over["size"] = 1 << 31
    case("zip_bomb_ratio.pt2", archive(SIMPLE, add=[bomb]), "write: more than DEFLATE can produce")
    big = E(TOP + "extra/bomb", b"\0" * 4096, deflate=True)
    big.over.update(size=0xFFFFFFFF, extra=zip64_extra(5 << 30))
    case("zip_bomb_over_limit.pt2", archive(SIMPLE, add=[big]), "write: more than the limit of 4294967296")
    liar = E(TOP + "extra/bomb", b"\0" * (1 << 20), deflate=True)
    liar.over["size"] = 1000
    case("zip_bomb_inflates_past_declared_size.pt2", archive(SIMPLE, add=[liar]),
         "write: inflates to more than its declared size of 1000 bytes")
    # Spread over entries: each passes the per-entry bounds, together they
    # pass the total (the test reads with a 16 MiB total, so the file stays
    # small; the default is 8 GiB).
    spread = [E(TOP + "extra/zeros_%02d" % i, b"\0" * (1 << 20), deflate=True) for i in range(20)]
    case("zip_bomb_spread_over_entries.pt2", archive(SIMPLE, add=spread),
         "write: bytes already inflated from this archive, more than the limit of 16777216 in all")
    short = E(TOP + "extra/short", b"\1" * 1000, deflate=True)
    short.over["size"] = 2000
    case("zip_deflate_shorter_than_declared.pt2", archive(SIMPLE, add=[short]),
         "write: inflates to 1000 bytes, but the central directory declares 2000")
    cut = E(TOP + "extra/cut", bytes(range(256)) * 8, deflate=True)
    cut.data = cut.data[: len(cut.data) // 2]
    case("zip_deflate_stream_truncated.pt2", archive(SIMPLE, add=[cut]), "write: compressed data is truncated")

    # --- program JSON ------------------------------------------------------
    mj = "models/model.json"
    case("json_truncated.pt2", archive(SIMPLE, {mj: lambda d: d[: len(d) // 2]}), "invalid JSON")
    case("json_not_an_object.pt2", archive(SIMPLE, {mj: lambda d: b"[1, 2, 3]"}), "$: expected an object")
    case("json_unknown_schema_major.pt2", archive(SIMPLE, {mj: sub('"major":8', '"major":9')}),
         "$.schema_version: schema major version 9 is not supported")
    case("json_unknown_argument_member.pt2",
         archive(SIMPLE, {mj: sub('{"name":"mat1","arg":{"as_tensor"', '{"name":"mat1","arg":{"as_mystery"')}),
         "unknown Argument member 'as_mystery'")
    case("json_undefined_value.pt2",
         archive(SIMPLE, {mj: sub('"arg":{"as_tensor":{"name":"arg"}},"kind"', '"arg":{"as_tensor":{"name":"ghost"}},"kind"')}),
         "references undefined value 'ghost'")
    case("json_value_defined_twice.pt2",
         archive(SIMPLE, {mj: sub('"outputs":[{"as_tensor":{"name":"permute"}}]', '"outputs":[{"as_tensor":{"name":"arg"}}]')}),
         "value 'arg' is defined twice")
    case("json_tensor_without_meta.pt2",
         archive(SIMPLE, {mj: sub('"permute":{"dtype":7', '"permute_gone":{"dtype":7')}),
         "tensor 'permute' has no entry in tensor_values")
    case("json_union_two_members.pt2",
         archive(SIMPLE, {mj: sub('{"as_tensor":{"name":"p_linear_bias"}}', '{"as_tensor":{"name":"p_linear_bias"},"as_int":3}')}),
         "union has several members set")
    case("json_signature_mismatch.pt2",
         archive(SIMPLE, {mj: sub('"parameter_name":"linear.weight"}}',
                                  '"parameter_name":"linear.weight"}},{"user_input":{"arg":{"as_tensor":{"name":"arg"}}}}')}),
         "input_specs[1]: names 'arg' but graph input 1 is 'p_linear_bias'")
    # Nesting: arguments nested 600 deep (1,200 levels of JSON), a spec
    # argument nested 100,000 deep, 1,100 nested arrays in a record carried
    # verbatim. simdjson's On-Demand does not count levels it skips, so
    # Lathe's one limit (1024 levels of JSON anywhere in a document) must
    # stop each before the stack runs out.
    nested = '{"as_int":1}'
    for _ in range(600):
        nested = '{"as_string_to_argument":{"k":' + nested + "}}"
    case("json_nested_arguments.pt2",
         archive(SIMPLE, {mj: sub('{"name":"mat1","arg":{"as_tensor":{"name":"arg"}},"kind":1}',
                                  '{"name":"mat1","arg":{"as_tensor":{"name":"arg"}},"kind":1},{"name":"deep","arg":' + nested + ',"kind":1}')},
                 deflate=[mj]),
         "JSON nested deeper than 1024 levels")
    deep_arg = '{"name":"arg"}'
    for _ in range(100000):
        deep_arg = '{"x":' + deep_arg + "}"
    case("json_nested_spec_argument.pt2",
         archive(SIMPLE, {mj: sub('{"user_input":{"arg":{"as_tensor":{"name":"arg"}}}}',
                                  '{"user_input":{"arg":' + deep_arg + '}}')},
                 deflate=[mj]),
         "JSON nested deeper than 1024 levels")
    case("json_nested_arrays.pt2",
         archive(SIMPLE, {mj: sub('"treespec_namedtuple_fields":{}', '"treespec_namedtuple_fields":' + "[" * 1100 + "]" * 1100)},
                 deflate=[mj]),
         "JSON nested deeper than 1024 levels")
    # A small archive whose graph record inflates to much more than it holds
    # (padding after the document): refused by its declared size, before
    # anything is inflated. The test reads with a 16 MiB record limit so
    # the file stays small; the default is 512 MiB (issue 33, item 19).
    case("json_record_over_size_limit.pt2",
         archive(SIMPLE, {mj: lambda d: d + b" " * (17 << 20)}, deflate=[mj]),
         "bytes uncompressed, more than the 16 MiB Lathe reads")
    # One JSON text must mean one program to every reader. PyTorch's
    # json.loads keeps a repeated member's last value and Lathe would keep
    # its first, so a repeat is refused wherever it is (issue 33, item 13);
    # so is a second document after the first.
    case("json_duplicate_key_target.pt2",
         archive(SIMPLE, {mj: sub('"target":"torch.ops.aten.addmm.default"',
                                  '"target":"torch.ops.aten.addmm.default","target":"torch.ops.aten.mm.default"')}),
         ".target: member appears twice in one object")
    case("json_duplicate_key_signature.pt2",
         archive(SIMPLE, {mj: sub('"output_specs":', '"output_specs":[],"output_specs":')}),
         "signature.output_specs: member appears twice in one object")
    case("json_duplicate_key_in_metadata_value.pt2",
         archive(SIMPLE, {mj: sub('"stack_trace":', '"carried":{"a":1,"b":{"c":2},"a":3},"stack_trace":')}),
         "member 'a' appears twice in one object")
    case("json_duplicate_key_weights_config.pt2",
         archive(SIMPLE, {wc_name(): sub('"path_name":"weight_0"', '"path_name":"weight_0","path_name":"weight_1"')}),
         ".path_name: member appears twice in one object")
    case("json_trailing_document.pt2", archive(SIMPLE, {mj: lambda d: d + b' {"schema_version":{"major":8,"minor":0}}'}),
         "data after the JSON document")
    case("json_trailing_garbage.pt2", archive(SIMPLE, {mj: lambda d: d + b"\n\n]garbage"}),
         "data after the JSON document")
    # Whatever the decoder reads or skips, the whole document is bounded
    # (1024 levels) before decoding: 100,000 levels under a key the decoder
    # does not know were once skipped unchecked.
    case("json_nested_unknown_key.pt2",
         archive(SIMPLE, {mj: sub('"treespec_namedtuple_fields":{}',
                                  '"treespec_namedtuple_fields":{},"not_a_schema_key":' + "[" * 100000 + "]" * 100000)},
                 deflate=[mj]),
         "JSON nested deeper than 1024 levels")

    # --- weights configs and weight records --------------------------------
    wc = "data/weights/model_weights_config.json"
    case("weights_path_traversal.pt2", archive(SIMPLE, {wc: sub('"path_name":"weight_0"', '"path_name":"../../models/model.json"')}),
         "is not a record name in data/weights/")
    case("weights_path_dotdot.pt2", archive(SIMPLE, {wc: sub('"path_name":"weight_0"', '"path_name":".."')}),
         "'..' is not a record name in data/weights/")
    case("weights_missing_record.pt2", archive(SIMPLE, drop=["data/weights/weight_0"]),
         "missing record 'data/weights/weight_0'")
    case("weights_sizes_past_record.pt2",
         archive(SIMPLE, {wc: sub('"sizes":[{"as_int":3},{"as_int":3}]', '"sizes":[{"as_int":300},{"as_int":3}]')}),
         "$.config.linear.weight: record 'data/weights/weight_0'")
    case("weights_storage_offset_past_record.pt2",
         archive(SIMPLE, {wc: sub('"storage_offset":{"as_int":0}', '"storage_offset":{"as_int":1000}')}),
         "bytes but its storage has")
    case("weights_sizes_overflow.pt2",
         archive(SIMPLE, {wc: sub('"sizes":[{"as_int":3},{"as_int":3}]',
                                  '"sizes":[{"as_int":4611686018427387904},{"as_int":4611686018427387904}]')}),
         "overflow")
    case("weights_negative_size.pt2",
         archive(SIMPLE, {wc: sub('"sizes":[{"as_int":3},{"as_int":3}]', '"sizes":[{"as_int":-3},{"as_int":3}]')}),
         "negative size")
    case("weights_negative_stride.pt2",
         archive(SIMPLE, {wc: sub('"strides":[{"as_int":3},{"as_int":1}]', '"strides":[{"as_int":-3},{"as_int":1}]')}),
         "negative stride")
    case("weights_record_not_multiple_of_dtype.pt2",
         archive(SIMPLE, {"data/weights/weight_0": lambda d: d[:-1]}),
         "not a multiple of the float32 element size 4")
    case("weights_unknown_dtype.pt2", archive(SIMPLE, {wc: sub('"dtype":7', '"dtype":77')}), "unknown scalar type 77")
    # A 0-byte record is a fake tensor, read as zeros: its declared size must
    # still be bounded before the zeros are allocated.
    case("weights_fake_tensor_huge.pt2",
         archive(SIMPLE, {"data/weights/weight_0": lambda d: b"",
                          wc: sub('"sizes":[{"as_int":3},{"as_int":3}]', '"sizes":[{"as_int":1099511627776},{"as_int":3}]')}),
         "too large to fill with zeros")
    case("weights_fake_tensor_overflow.pt2",
         archive(SIMPLE, {"data/weights/weight_0": lambda d: b"",
                          wc: sub('"sizes":[{"as_int":3},{"as_int":3}]',
                                  '"sizes":[{"as_int":4611686018427387904},{"as_int":4611686018427387904}]')}),
         "overflow")
    case("weights_config_missing.pt2", archive(SIMPLE, drop=[wc]),
         "missing record 'data/weights/model_weights_config.json'")
    case("archive_version_unknown.pt2", archive(SIMPLE, {"archive_version": lambda d: b"7"}), "archive_version: is '7'")
    case("archive_no_models.pt2", archive(SIMPLE, drop=["models/model.json"]), "no models/<name>.json record")

    # --- torch.save pickles (PyTorch 2.8 layout: data/weights/model.pt) ----
    w = "linear.weight"
    case("pickle_forbidden_global.pt2", with_weights_pickle(PROTO + b"cos\nsystem\n" + p_str("true") + b"\x85R."),
         "'os.system' is not allowed in a torch.save pickle")
    case("pickle_forbidden_opcode.pt2", with_weights_pickle(PROTO + b"}b."), "BUILD at byte 3: not supported")
    case("pickle_memo_index_huge.pt2", with_weights_pickle(PROTO + b"}r\xff\xff\xff\xff."),
         "memo index 4294967295 exceeds the limit")
    case("pickle_memo_get_unset.pt2", with_weights_pickle(PROTO + b"h\x07."), "memo index 7 was never stored")
    case("pickle_marks_too_deep.pt2", with_weights_pickle(PROTO + b"(" * 1100 + b"."), "nested MARKs")
    case("pickle_stack_underflow.pt2", with_weights_pickle(PROTO + b"s."), "stack underflow")
    case("pickle_truncated_string.pt2", with_weights_pickle(PROTO + b"X\xff\xff\xff\x7fabc"),
         "truncated: needs 2147483647 bytes")
    case("pickle_no_stop.pt2", with_weights_pickle(PROTO + b"}"), "without STOP")
    case("pickle_reference_cycle.pt2", with_weights_pickle(PROTO + b"]q\x00h\x00a."), "reference cycle")
    # Billion laughs: each list holds the previous one twice.
    laughs = PROTO + b"(]q\x00"  # all in one tuple: MARK ... TUPLE
    for i in range(1, 40):
        laughs += b"](h" + bytes([i - 1]) + b"h" + bytes([i - 1]) + b"eq" + bytes([i])
    case("pickle_billion_laughs.pt2", with_weights_pickle(laughs + b"t."), "once shared references are expanded")
    # Quadratic blow-up: one 50,000-int tuple, memoized, passed as the sizes
    # of tensor after tensor (15 bytes each) would copy 400 KB per tensor.
    ones = PROTO + b"K\x01q\x00(" + b"h\x00" * 50000 + b"tq\x01"
    ones += b"ctorch._utils\n_rebuild_tensor_v2\nq\x02(" + STORAGE_PID("0", 1) + b"q\x03}q\x04]("
    ones += b"h\x02(h\x03K\x00h\x01h\x01\x89h\x04tR" * 100 + b"e."
    case("pickle_copies_bomb.pt2",
         archive(SIMPLE_28, {"data/weights/model.pt": lambda _: torch_save(ones, [("0", b"\0" * 4)])},
                 deflate=["data/weights/model.pt"]),
         "values copied from tuples in all")
    case("pickle_storage_larger_than_record.pt2",
         with_weights_pickle(state_dict((w, rebuild("0", 1 << 20, 0, [3, 3], [3, 1]))), [("0", b"\0" * 36)]),
         "declares 1048576 float32 elements but its record")
    case("pickle_storage_missing_record.pt2",
         with_weights_pickle(state_dict((w, rebuild("9", 9, 0, [3, 3], [3, 1]))), [("0", b"\0" * 36)]),
         "storage '9' has no record")
    case("pickle_tensor_past_storage.pt2",
         with_weights_pickle(state_dict((w, rebuild("0", 9, 0, [30, 3], [3, 1]))), [("0", b"\0" * 36)]),
         "_rebuild_tensor_v2")
    case("pickle_tensor_sizes_overflow.pt2",
         with_weights_pickle(state_dict((w, rebuild("0", 9, 0, [0x7FFFFFFF] * 4, [1, 1, 1, 1]))), [("0", b"\0" * 36)]),
         "overflow")
    case("pickle_not_a_dict.pt2", with_weights_pickle(PROTO + b"]."), "not a dict of name -> tensor")
    case("pickle_big_endian.pt2",
         archive(SIMPLE_28, {"data/weights/model.pt": lambda d: forge([E("archive/data.pkl", PROTO + b"}."),
                                                                       E("archive/byteorder", b"big")])}),
         "only little-endian archives are read")

    # --- legacy flat zips (PyTorch 2.2-2.7) --------------------------------
    case("legacy_missing_state_dict.pt2", archive(SIMPLE_LEGACY, drop=["serialized_state_dict.pt"]),
         "missing record 'serialized_state_dict.pt'")
    case("legacy_schema_version_bogus.pt2",
         archive(SIMPLE_LEGACY, {"serialized_exported_program.json": sub('"schema_version":{"major":8,"minor":1}',
                                                                          '"schema_version":99')}),
         "integer schema version 99 is not one PyTorch wrote")

    # --- input sizes and ranges (issue 33, items 8 and 23) -----------------
    # Each once loaded and left run's input check off (sizes 0, 65, 1000
    # ran for s77 in [2, 64]) or refusing every size: refused at load, with
    # the input, the size as written and what is wrong.
    def symbolic(edit):
        return archive(SYMBOLIC, {mj: edit}, top="symbolic/")

    def x_size(expr):
        return symbolic(sub('"x":{"dtype":7,"sizes":[{"as_expr":{"expr_str":"Symbol(\'s77\', positive=True, integer=True)"',
                            '"x":{"dtype":7,"sizes":[{"as_expr":{"expr_str":' + json.dumps(expr)))
    case("symbolic_size_unparsable.pt2", x_size("Symbol('s77', positive=True"),
         "user input 'x' dim 0: size \"Symbol('s77', positive=True\" does not parse: unexpected end of text")
    case("symbolic_size_division_by_zero.pt2", x_size("s77//0"),
         "user input 'x' dim 0: size \"s77//0\" cannot be computed for s77 = 2 (the lower end of its range): "
         "division by zero (2 // 0)")
    case("symbolic_size_unknown_symbol.pt2", x_size("Symbol('s99', positive=True, integer=True)"),
         "names symbol 's99', which has no range in range_constraints")
    case("symbolic_size_power_tower.pt2", x_size("s77**s77**s77"),
         "size \"s77**s77**s77\" cannot be computed for s77 = 64 (the upper end of its range): "
         "64 ** 64 does not fit in 64 bits")
    case("symbolic_size_nested_too_deep.pt2", x_size("s77" + "**s77" * 1000),
         "does not parse: nested deeper than 100 levels")
    case("symbolic_size_symbol_without_range.pt2",
         symbolic(sub('"range_constraints":{"s77":{"min_val":2,"max_val":64}}', '"range_constraints":{}')),
         "user input 'x' dim 0: size \"Symbol('s77', positive=True, integer=True)\" names symbol 's77', "
         "which has no range in range_constraints")
    case("range_min_above_max.pt2",
         symbolic(sub('"range_constraints":{"s77":{"min_val":2,"max_val":64}}',
                      '"range_constraints":{"s77":{"min_val":64,"max_val":1}}')),
         "range_constraints: s77's range [64, 1] is empty: min_val 64 is above max_val 1")
    case("placeholder_negative_size.pt2",
         archive(SIMPLE, {mj: sub('"p_linear_weight":{"dtype":7,"sizes":[{"as_int":3},{"as_int":3}]',
                                  '"p_linear_weight":{"dtype":7,"sizes":[{"as_int":-3},{"as_int":3}]')}),
         "models/model.json: placeholder 'p_linear_weight' (input 0, parameter 'linear.weight') declares a "
         "negative size: dim 0 is -3")

    # --- loads, but does not verify ----------------------------------------
    case("verify_parameter_missing_from_state.pt2",
         archive(SIMPLE, {wc: sub('"linear.weight":', '"linear.other":')}),
         "verify: linear.weight")


def main():
    build()
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".pt2"):
            os.remove(os.path.join(OUT, f))
    lines = ["# <file> -> <text the error must contain>. Generated by tools/make_malformed.py;",
             "# tests/malformed/malformed_test.cpp checks each (read_pt2 with default limits",
             "# except a 16 MiB total for inflated bytes, then verify for lines 'verify: ...',",
             "# write_pt2 for lines 'write: ...').",
             "# Every read_pt2 error must also name the file."]
    total = 0
    for name, data, expected in CASES:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        total += len(data)
        lines.append("%s -> %s" % (name, expected))
    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d malformed archives, %d bytes in all" % (len(CASES), total))


if __name__ == "__main__":
    main()
