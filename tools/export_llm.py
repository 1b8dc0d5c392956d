#!/usr/bin/env python3
"""Export the KV-cache decoders of fixtures/llm/: LLMs the way ExecuTorch and
transformers export them for devices, one token per call, the cache a
mutable buffer the program updates in place.

    .venv/bin/python tools/export_llm.py                # needs executorch (scripts/setup-peers.sh)
    .venv/bin/python tools/export_llm.py --only hf_llama

Models (random weights under a per-name seed, small configurations):

* ``et_llama``: ExecuTorch's own Llama (``executorch.examples.models.llama``,
  the pinned executorch wheel) with ``use_kv_cache=True``: ``forward(tokens
  [1, 1], input_pos [1]) -> logits``; the cache is updated with
  ``index_put_`` into its buffers.
* ``hf_llama``, ``hf_qwen2``, ``hf_gemma``: transformers' static-cache export
  wrapper (``TorchExportableModuleWithStaticCache``): ``forward(input_ids
  [1, 1], cache_position [1]) -> logits``; the cache is updated with
  ``index_copy_``.

Each is written as exported (``<name>.pt2``) and, for ``et_llama``, after
``run_decompositions()`` (``<name>_decomposed.pt2``: functional updates plus
buffer-mutation outputs; torch 2.13 cannot decompose the static-cache
wrappers, see MODELS). Beside them: ``<name>.ref/model/call_0/`` (the
first decode step, for ``lathe run --check``) and ``<name>.decode.json``:
the prompt and the tokens greedy decoding produces on the eager module, fed
one token per call (prompt tokens first, then each argmax), and
``<name>.decode_logits.npy``, every step's logits, which the tests reproduce
step by step through Lathe.
"""

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import zlib
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "fixtures", "llm")
PROMPT = [5, 17, 42, 8]
NEW_TOKENS = 32
CACHE_LEN = 48
VOCAB = 99


class StepInputs(torch.nn.Module):
    """Positional (token, position) for a wrapper whose forward takes keywords."""

    def __init__(self, inner, token_kw, pos_kw):
        super().__init__()
        self.inner = inner
        self.token_kw, self.pos_kw = token_kw, pos_kw

    def forward(self, token, position):
        return self.inner(**{self.token_kw: token, self.pos_kw: position})


class EtLlama(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens, input_pos):
        return self.model(tokens, {"input_pos": input_pos})


def build_et_llama():
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    args = ModelArgs(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=VOCAB, hidden_dim=64,
                     max_seq_len=CACHE_LEN, max_context_len=CACHE_LEN, use_kv_cache=True)
    return EtLlama(construct_transformer(args).eval())


def build_hf(family):
    import transformers as tf
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    common = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  intermediate_size=64, max_position_embeddings=64,
                  # Wider than the default 0.02, so that the random model's
                  # greedy tokens depend on the context (at 0.02 Gemma's
                  # argmax is one token at every step, which a broken cache
                  # update would reproduce too).
                  initializer_range=0.2)
    cls, config = {
        "llama": (tf.LlamaForCausalLM, lambda: tf.LlamaConfig(**common)),
        "qwen2": (tf.Qwen2ForCausalLM, lambda: tf.Qwen2Config(**common)),
        "gemma": (tf.GemmaForCausalLM, lambda: tf.GemmaConfig(head_dim=8, **common)),
    }[family]
    model = cls(config()).eval()
    model.generation_config.use_cache = True
    model.generation_config.cache_implementation = "static"
    wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=CACHE_LEN)
    return StepInputs(wrapped, "input_ids", "cache_position")


MODELS = OrderedDict([
    ("et_llama", ("ExecuTorch's Llama (examples/models/llama, use_kv_cache=True): index_put_ into the cache buffers",
                  build_et_llama, True)),
    ("hf_llama", ("transformers Llama through TorchExportableModuleWithStaticCache: index_copy_ into a static cache",
                  lambda: build_hf("llama"), False)),
    ("hf_qwen2", ("transformers Qwen2 through TorchExportableModuleWithStaticCache", lambda: build_hf("qwen2"), False)),
    ("hf_gemma", ("transformers Gemma through TorchExportableModuleWithStaticCache", lambda: build_hf("gemma"), False)),
])
# The static-cache wrappers have no decomposed form: torch 2.13's own
# run_decompositions() fails on them (AssertionError "expected compiled_fn to
# be GraphModule" inside AOT autograd), loaded back or not.


def step_args(token, position):
    return (torch.tensor([[token]], dtype=torch.long), torch.tensor([position], dtype=torch.long))


def greedy_decode(step):
    """Feeds the prompt one token per call, then each argmax; returns the
    generated tokens (the first predicted after the last prompt token) and
    every step's logits [steps, vocab] (a random model's greedy tokens may
    repeat, so the tests compare each step's logits too)."""
    out, rows, token = [], [], PROMPT[0]
    for pos in range(len(PROMPT) + NEW_TOKENS - 1):
        logits = step(*step_args(token, pos))
        row = logits.reshape(-1, logits.shape[-1])[-1]
        rows.append(row.detach().clone())
        nxt = int(torch.argmax(row))
        if pos + 1 < len(PROMPT):
            token = PROMPT[pos + 1]
        else:
            out.append(nxt)
            token = nxt
    return out, torch.stack(rows)


def export_one(name, description, build, out, decompose):
    torch.manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    module = build()
    # Inference weights (with requires_grad, torch 2.13's run_decompositions()
    # of these programs fails inside AOT autograd).
    for p in module.parameters():
        p.requires_grad_(False)
    eager = copy.deepcopy(module)
    ep = torch.export.export(copy.deepcopy(module), step_args(PROMPT[0], 0), strict=False)
    if decompose:
        # Decomposed from the program as torch.export.load gives it back: on
        # the freshly exported one, torch 2.13's run_decompositions() fails
        # inside AOT autograd ("expected compiled_fn to be GraphModule").
        with tempfile.TemporaryDirectory() as scratch:
            torch.export.save(ep, os.path.join(scratch, "ep.pt2"))
            ep = torch.export.load(os.path.join(scratch, "ep.pt2")).run_decompositions()
    with torch.no_grad():
        want, want_logits = greedy_decode(eager)
    fixture = name + ("_decomposed" if decompose else "")
    path = os.path.join(out, fixture + ".pt2")
    with tempfile.TemporaryDirectory(dir=out) as scratch:
        tmp = os.path.join(scratch, fixture + ".pt2")
        torch.export.save(ep, tmp)
        os.replace(tmp, path)
    # The written archive, loaded back, decodes the same tokens.
    loaded = torch.export.load(path).module()
    with torch.no_grad():
        got, _ = greedy_decode(loaded)
    if got != want:
        raise AssertionError("%s: the loaded archive decodes %s, eager %s" % (path, got, want))
    ref = os.path.join(out, fixture + ".ref")
    shutil.rmtree(ref, ignore_errors=True)
    d = os.path.join(ref, "model", "call_0")
    os.makedirs(d)
    first = step_args(PROMPT[0], 0)
    with torch.no_grad():
        logits = copy.deepcopy(module)(*first)
    for i, a in enumerate(first):
        np.save(os.path.join(d, "input_%d.npy" % i), a.numpy())
    np.save(os.path.join(d, "output_0.npy"), logits.detach().contiguous().numpy())
    np.save(os.path.join(out, fixture + ".decode_logits.npy"), want_logits.numpy())
    with open(os.path.join(out, fixture + ".decode.json"), "w") as f:
        json.dump(OrderedDict([("description", description + ("; after run_decompositions()" if decompose else "; as exported")),
                               ("prompt", PROMPT), ("new_tokens", NEW_TOKENS), ("tokens", want),
                               ("inputs", ["token [1, 1] int64", "position [1] int64"]),
                               ("torch", torch.__version__)]), f, indent=1)
        f.write("\n")
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    print("wrote %s (%d bytes): tokens %s; ops %s" % (path, os.path.getsize(path), want[:8], ops))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    for n in names:
        description, build, decomposes = MODELS[n]
        for decompose in (False, True)[:2 if decomposes else 1]:
            export_one(n, description, build, args.out, decompose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
