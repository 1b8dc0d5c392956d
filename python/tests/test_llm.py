"""LLM decoding end to end (fixtures/llm, tools/export_llm.py): ExecuTorch's
Llama with its KV cache and transformers' static-cache decoders, greedy
decoding one token per call through the Python API, as exported, after the
default passes and lowered to XNNPACK. Every step's logits and every token
must be PyTorch's (the eager module's, recorded by the exporter)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import lathe

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
LLM = os.path.join(SOURCE, "fixtures", "llm")
NAMES = sorted(f[:-len(".decode.json")] for f in os.listdir(LLM) if f.endswith(".decode.json"))
sys.path.insert(0, os.path.join(SOURCE, "examples"))

from llm_decode import greedy  # noqa: E402


def expected(name):
    with open(os.path.join(LLM, name + ".decode.json")) as f:
        d = json.load(f)
    return d, np.load(os.path.join(LLM, name + ".decode_logits.npy"))


def decode_with_logits(program, prompt, new_tokens):
    program.reset_state()
    rows, tokens, token = [], [], prompt[0]
    for pos in range(len(prompt) + new_tokens - 1):
        (logits,) = program.run(np.array([[token]], np.int64), np.array([pos], np.int64))
        row = np.asarray(logits).reshape(-1, logits.shape[-1])[-1]
        rows.append(row.copy())
        token = prompt[pos + 1] if pos + 1 < len(prompt) else int(np.argmax(row))
        if pos + 1 >= len(prompt):
            tokens.append(token)
    return tokens, np.stack(rows)


def program_as(name, form):
    p = lathe.load(os.path.join(LLM, name + ".pt2"))
    if form == "transformed":
        p, _ = p.transform(passes="default")
    elif form == "xnnpack":
        if os.environ.get("LATHE_WITH_XNNPACK", "1") != "1":
            pytest.skip("built without XNNPACK")
        p, _ = p.lower("xnnpack")
    return p


def test_every_decoder_is_here():
    assert {"et_llama", "et_llama_decomposed", "hf_llama", "hf_qwen2", "hf_gemma"} <= set(NAMES)


@pytest.mark.parametrize("form", ["as_loaded", "transformed", "xnnpack"])
@pytest.mark.parametrize("name", NAMES)
def test_greedy_decode_matches_pytorch(name, form):
    want, want_logits = expected(name)
    p = program_as(name, form)
    tokens, logits = decode_with_logits(p, want["prompt"], want["new_tokens"])
    np.testing.assert_allclose(logits, want_logits, rtol=1e-4, atol=1e-4,
                               err_msg="%s (%s): logits differ from PyTorch's" % (name, form))
    assert tokens == want["tokens"], "%s (%s)" % (name, form)
    # A second sequence after reset_state() starts from the initial cache.
    again, _ = decode_with_logits(p, want["prompt"], want["new_tokens"])
    assert again == want["tokens"]


def test_the_example_decodes_the_same_tokens():
    want, _ = expected("et_llama")
    p = lathe.load(os.path.join(LLM, "et_llama.pt2"))
    assert greedy(p, want["prompt"], want["new_tokens"]) == want["tokens"]
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "llm_decode.py"),
                        os.path.join(LLM, "hf_llama.pt2")], capture_output=True, text=True, check=True)
    assert r.stdout.split() == [str(t) for t in expected("hf_llama")[0]["tokens"]]
