#!/usr/bin/python3
"""Regenerates the fuzzers' seed corpora (fuzz/corpus/<harness>/) and the
JSON dictionary (fuzz/program_json.dict) from the committed fixtures and the
real PyTorch 2.2 archive in ../shared (optional: skipped when absent).

The seeds are committed, so fuzzing needs neither this script nor ../shared.
Standard library only:  /usr/bin/python3 fuzz/make_corpus.py [--only HARNESS...]
(--only rewrites just those harnesses' seeds). Seeds named regression_*
(inputs that once found a bug) are kept.
"""
import argparse
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
HADES = os.path.join(ROOT, "..", "shared", "external", "pt2", "hades_pid_exported_program.pt2")

# Small archives only: libFuzzer's speed falls with input size.
ARCHIVES = [
    "fixtures/simple_linear.pt2",
    "fixtures/buffer_mutation.pt2",
    "fixtures/tied_embedding.pt2",
    "fixtures/two_methods.pt2",
    "fixtures/tts_duration_predictor.pt2",
    "fixtures/pt2-2.8/simple_linear.pt2",
    "fixtures/pt2-2.8/buffer_mutation.pt2",
    "fixtures/pt2-2.8/tied_embedding.pt2",
    "fixtures/legacy-2.4/simple_linear.pt2",
    "fixtures/legacy-2.4/buffer_mutation.pt2",
    "fixtures/legacy-2.4/tied_embedding.pt2",
]
# Archives whose JSON records are seeds even though the archives are too big.
JSON_ONLY = ["fixtures/transformer_block.pt2", "fixtures/mlp.pt2"]
# fuzz_program_structure mutates whole programs: every small model JSON of
# the fixtures (the constructs too: control flow, symbolic and unbacked
# sizes, effects, dtypes, mutations), compacted.
STRUCTURE_MAX = 60000
STRUCTURE_ARCHIVES = sorted(
    os.path.join(d, f) for d in ("fixtures", "fixtures/dynamic", "fixtures/constructs")
    for f in os.listdir(os.path.join(ROOT, d)) if f.endswith(".pt2"))
# fuzz_runtime reads its input through FuzzedDataProvider: seeds are fixed
# pseudo-random byte strings (the first byte picks the sweep or the registry
# builder, the last bytes are read first for integers).
RUNTIME_SEEDS = 48
PICKLES = sorted(os.path.join("tests/data/pickles", f)
                 for f in os.listdir(os.path.join(ROOT, "tests/data/pickles")) if f.endswith(".pt"))


def rel(path):
    return os.path.join(ROOT, path)


SELECTED = None  # harnesses to write (--only); None: all


def seed(harness, name, data):
    if SELECTED is not None and harness not in SELECTED:
        return
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def slug(path):
    return path.replace("fixtures/", "").replace("tests/data/", "").replace("/", "_")


def records(zip_bytes):
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def lrec(recs):
    out = bytearray(b"LREC\n")
    for name, data in recs:
        out += name.encode() + b"\n" + struct.pack("<I", len(data)) + data
    return bytes(out)


def data_pkl(torch_save_bytes):
    for name, data in records(torch_save_bytes):
        if name.endswith("/data.pkl"):
            return data
    raise ValueError("no data.pkl")


# Maps keyed by value or tensor names: their keys are not schema words.
NAME_MAPS = {"tensor_values", "sym_int_values", "sym_bool_values", "sym_float_values", "config",
             "range_constraints", "opset_version", "metadata", "custom_obj_values"}


def json_keys(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            if k in NAME_MAPS and isinstance(v, dict):
                for inner in v.values():
                    json_keys(inner, out)
            else:
                json_keys(v, out)
    elif isinstance(obj, list):
        for v in obj:
            json_keys(v, out)


def zeroed_torch_save(torch_save_bytes):
    """The same torch.save archive with every storage zero-filled."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        for name, data in records(torch_save_bytes):
            if "/data/" in name:
                data = bytes(len(data))
            out.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def clear(harnesses):
    """Removes the seeds this script writes (regression_* inputs stay)."""
    for h in harnesses:
        d = os.path.join(CORPUS, h)
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if not f.startswith("regression_"):
                os.unlink(os.path.join(d, f))


def structure_seeds():
    for path in STRUCTURE_ARCHIVES:
        try:
            recs = records(open(rel(path), "rb").read())
        except zipfile.BadZipFile:
            continue
        for rname, data in recs:
            if "/models/" in rname and rname.endswith(".json"):
                text = json.dumps(json.loads(data), separators=(",", ":")).encode()
                if len(text) <= STRUCTURE_MAX:
                    seed("program_structure", slug(path).replace(".pt2", "") + "_" + rname.split("/")[-1], text)


def runtime_seeds():
    for i in range(RUNTIME_SEEDS):
        data = hashlib.sha256(b"fuzz_runtime %d" % i).digest() * (1 + i % 4)
        seed("runtime", "seed_%02d" % i, data[: 24 + (i * 13) % len(data)])


def main():
    global SELECTED
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", metavar="HARNESS")
    SELECTED = set(ap.parse_args().only) if ap.parse_args().only else None
    clear(SELECTED if SELECTED is not None else os.listdir(CORPUS) if os.path.isdir(CORPUS) else [])
    keys = set()
    structure_seeds()
    runtime_seeds()

    for path in ARCHIVES:
        raw = open(rel(path), "rb").read()
        name = slug(path)
        seed("zip_reader", name, raw)
        seed("load_pt2", name, raw)
        recs = records(raw)
        seed("load_pt2", name.replace(".pt2", ".lrec"), lrec(recs))
        for rname, data in recs:
            base = rname.split("/")[-1]
            if rname.endswith(".json") and ("models/" in rname or rname == "serialized_exported_program.json"):
                seed("program_json", name.replace(".pt2", "") + "_" + base, data)
                json_keys(json.loads(data), keys)
            elif rname.endswith("_config.json"):
                seed("program_json", name.replace(".pt2", "") + "_" + base, data)
                json_keys(json.loads(data), keys)
            elif data[:4] == b"PK\x03\x04":  # a nested torch.save archive
                seed("zip_reader", name.replace(".pt2", "") + "_" + base, data)
                seed("unpickle", name.replace(".pt2", "") + "_" + base, data)
                seed("unpickle", name.replace(".pt2", "") + "_" + base + ".pkl", data_pkl(data))

    for path in JSON_ONLY:
        for rname, data in records(open(rel(path), "rb").read()):
            if "models/" in rname and rname.endswith(".json"):
                seed("program_json", slug(path).replace(".pt2", "") + "_" + rname.split("/")[-1], data)
                json_keys(json.loads(data), keys)

    for path in PICKLES:
        raw = open(rel(path), "rb").read()
        seed("unpickle", slug(path), raw)
        seed("unpickle", slug(path) + ".pkl", data_pkl(raw))

    if os.path.exists(HADES):
        # The real PyTorch 2.2 archive: its pre-schema-8 JSON, its pickles, and
        # a small twin for the load harness (storages zero-filled, then every
        # record DEFLATE-compressed: 1.6 MB -> a few KB, still loadable).
        hades = records(open(HADES, "rb").read())
        small = io.BytesIO()
        with zipfile.ZipFile(small, "w", zipfile.ZIP_DEFLATED) as out:
            for rname, data in hades:
                if rname == "serialized_exported_program.json":
                    seed("program_json", "hades_" + rname, data)
                    json_keys(json.loads(data), keys)
                elif data[:4] == b"PK\x03\x04":
                    seed("unpickle", "hades_" + rname + ".pkl", data_pkl(data))
                    if len(data) < 4096:
                        seed("unpickle", "hades_" + rname, data)
                        seed("zip_reader", "hades_" + rname, data)
                    data = zeroed_torch_save(data)
                out.writestr(zipfile.ZipInfo(rname, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        seed("load_pt2", "hades_zeroed_deflated.pt2", small.getvalue())
        seed("zip_reader", "hades_zeroed_deflated.pt2", small.getvalue())
    else:
        print("note: %s not found; hades seeds skipped" % HADES, file=sys.stderr)

    if SELECTED is not None and not SELECTED & {"program_json", "load_pt2"}:
        keys = None  # the dictionary comes from their seeds: left as it is
    if keys is not None:
        write_dict(keys)
    for h in sorted(os.listdir(CORPUS)):
        if SELECTED is not None and h not in SELECTED:
            continue
        files = os.listdir(os.path.join(CORPUS, h))
        size = sum(os.path.getsize(os.path.join(CORPUS, h, x)) for x in files)
        print("%-17s %3d seeds, %7d bytes, largest %6d" % (h, len(files), size,
              max(os.path.getsize(os.path.join(CORPUS, h, x)) for x in files)))


def write_dict(keys):
    with open(os.path.join(ROOT, "fuzz", "program_json.dict"), "w") as f:
        f.write("# JSON member names of the export schema (fuzz/make_corpus.py)\n")
        for k in sorted(keys):
            if k.isascii() and k.isprintable() and '"' not in k and "\\" not in k and len(k) < 60:
                f.write('"\\"%s\\""\n' % k)


if __name__ == "__main__":
    main()
