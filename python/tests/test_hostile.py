"""Archives changed on disk while a loaded Program uses them (issue 33, item 2;
docs/hostile-input.md, "Archives modified while in use"). Lathe reads weights
in place from the mapped file: a truncated archive used to kill the
interpreter with SIGBUS, and bytes rewritten in place silently changed the
outputs. Each case must now raise lathe.Error naming the file, and a file
renamed over the path must not disturb the loaded program."""
import os
import shutil
import time

import numpy as np
import pytest

import lathe

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def fixture(name):
    return os.path.join(SOURCE, "fixtures", name + ".pt2")


def copy_dated(name, path):
    """A copy of a fixture dated an hour back, so that a change made now
    shows in its modification time however coarse the file system's clock."""
    shutil.copyfile(fixture(name), path)
    past = time.time() - 3600
    os.utime(path, (past, past))
    return path


X = np.linspace(-1, 1, 2 * 64, dtype=np.float32).reshape(2, 64)


def loaded(tmp_path):
    path = copy_dated("mlp", str(tmp_path / "in.pt2"))
    p = lathe.load(path)
    (y,) = p.run(X)
    return path, p, y


def expect_in_use(path, call):
    with pytest.raises(lathe.Error) as e:
        call()
    assert f"{path}: the archive was" in str(e.value)
    assert "while in use" in str(e.value)


def test_truncated_after_load(tmp_path):
    path, p, _ = loaded(tmp_path)
    os.truncate(path, 0)
    expect_in_use(path, lambda: p.run(X))
    expect_in_use(path, lambda: p.run(X))  # and every later call


def test_overwritten_in_place_after_load(tmp_path):
    path, p, _ = loaded(tmp_path)
    shutil.copyfile(fixture("convnet"), path)  # `cp convnet.pt2 in.pt2`: same inode, new bytes
    expect_in_use(path, lambda: p.run(X))


def test_weight_bytes_rewritten_in_place(tmp_path):
    path, p, _ = loaded(tmp_path)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # the same size; every byte of the middle half flipped
        f.seek(size // 4)
        data = f.read(size // 2)
        f.seek(size // 4)
        f.write(bytes(b ^ 0xFF for b in data))
    expect_in_use(path, lambda: p.run(X))


def test_save_of_a_truncated_archive_writes_nothing(tmp_path):
    path, p, _ = loaded(tmp_path)
    out = tmp_path / "out.pt2"
    os.truncate(path, os.path.getsize(path) // 2)
    expect_in_use(path, lambda: p.save(str(out)))
    assert not out.exists()
    assert [f for f in os.listdir(tmp_path) if ".tmp-" in f] == []


def test_a_file_renamed_over_the_path_does_not_disturb(tmp_path):
    path, p, y = loaded(tmp_path)
    new = copy_dated("convnet", str(tmp_path / "new.pt2"))
    os.replace(new, path)  # the loaded program keeps the file it opened
    (again,) = p.run(X)
    np.testing.assert_array_equal(again, y)


def test_error_messages_carry_names_escaped(tmp_path):
    """A name from the file holding terminal escape codes and a bidi override
    (issue 33, item 17) reaches a lathe.Error's message escaped, as the CLI
    prints it: a traceback must not drive the terminal."""
    import json
    import zipfile

    hostile = "gone\x1b]0;pwned\x07\u202e"
    path = str(tmp_path / "undefined.pt2")
    with zipfile.ZipFile(fixture("simple_linear")) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("models/model.json"):
                model = json.loads(data)
                model["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"]["as_tensor"]["name"] = hostile
                data = json.dumps(model).encode()
            zout.writestr(info.filename, data)
    with pytest.raises(lathe.Error) as e:
        lathe.load(path)
    message = str(e.value)
    assert "undefined value" in message
    assert "\x1b" not in message and "\x07" not in message and "\u202e" not in message, repr(message)
    assert "gone\\x1b]0;pwned\\x07\\u202e" in message


# Issue 33, items 20 and 21, as tools/hostile_probe.py found them still:
# every failure of these calls is lathe.Error (torch raised BufferError or
# RuntimeError, pybind11 a TypeError), and a strided memoryview is read as
# bytes(view) reads it, not as the raw span behind it.
def torch_tensors_without_a_dense_form():
    import torch
    x = torch.eye(3)
    yield "sparse", x.to_sparse()
    yield "meta", torch.empty(3, 3, device="meta")
    yield "quantized", torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    yield "nested", torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])


def test_tensors_without_a_dense_form_raise_lathe_error():
    program = lathe.load(fixture("simple_linear"))
    for kind, tensor in torch_tensors_without_a_dense_form():
        with pytest.raises(lathe.Error, match="input 0"):
            program.run(tensor)


def test_bad_method_names_raise_lathe_error():
    program = lathe.load(fixture("simple_linear"))
    x = np.ones((2, 3), dtype=np.float32)
    for method, why in [("\udcff", "not valid text"), ("", "empty"), ("mo\0del", "NUL"), (3, "expected a str")]:
        with pytest.raises(lathe.Error, match=why):
            program.run(x, method=method)


def test_nul_in_a_save_path_raises_lathe_error(tmp_path):
    program = lathe.load(fixture("simple_linear"))
    for path in [str(tmp_path / "out.pt2") + "\0x", tmp_path / ("out.pt2\0x")]:
        with pytest.raises(lathe.Error, match="NUL"):
            program.save(path)
    assert not list(tmp_path.iterdir())


def test_a_strided_memoryview_is_read_through_its_strides():
    data = open(fixture("simple_linear"), "rb").read()
    doubled = bytes(b for pair in zip(data, data) for b in pair)  # every byte twice
    program = lathe.load(memoryview(doubled)[::2])
    x = np.ones((2, 3), dtype=np.float32)
    expected = lathe.load(data).run(x)[0]
    np.testing.assert_array_equal(program.run(x)[0], expected)
