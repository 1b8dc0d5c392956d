#!/usr/bin/env python3
"""LLM decode speed: one KV-cache decode step of a Llama-style decoder at a
real size, in fp32, int8 weight-only and int4 weight-only, run by Lathe
(portable kernels and XNNPACK), by PyTorch eager on the same weights, and
by the two runtimes people decode with on a CPU, ExecuTorch with XNNPACK
(tools/peers/executorch_llm_peer.py) and llama.cpp
(tools/peers/llamacpp_peer.py), beside the weight-streaming bound.

    .venv/bin/python tools/bench_llm_decode.py                  # TinyLlama-1.1B's config
    .venv/bin/python tools/bench_llm_decode.py --layers 4 --schemes fp32

The model is transformers' LlamaForCausalLM with TinyLlama-1.1B's
configuration (hidden 2048, 22 layers, 32 heads, 4 KV heads, MLP 5632,
vocabulary 32000) and random weights, wrapped in transformers'
static-cache export module (the cache a mutable buffer the program updates
in place, one token per call), exported by torch.export (PyTorch 2.13),
quantized first by torchao where asked (the schemes of
tools/export_quantized_fixtures.py: Int8WeightOnlyConfig per channel,
IntxWeightOnlyConfig int4 groups of 32), then rewritten by ``lathe
transform`` (TRANSFORM below) and timed by ``lathe run --repeat``
(median and p90 of the calls after one untimed warm-up). Every call decodes
at the same position of the cache, so each does the same work.

The bound: a decode step reads every linear weight once (the embedding
table only for its one row), so no implementation is faster than
weight bytes per token / streaming-read bandwidth (tools/peers/stream_read.c,
one core; x threads as the upper bound at more threads).

Lathe's first outputs are checked against eager's on the same call.

The peers start from the same fp32 weights (``build`` with the same seed)
and quantize them their own way, each in a process of its own (ExecuTorch's
strict export and lowering of the fp32 model peaks near 13 GB):
* ExecuTorch: its Llama export's schemes, 8da4w (int4 groups of 32, int8
  activations quantized per token at run time) for int4g32 and 8da8w for
  int8wo (ExecuTorch lowers no weight-only int8 linear to XNNPACK), checked
  against eager on the same torchao weights;
* llama.cpp: F32, Q8_0 and Q4_0 (its groups of 32, activations quantized to
  Q8_0), checked against fp32 eager on the first token.
A peer that is not installed (scripts/setup-llm-peers.sh for llama.cpp)
shows as n/a with the reason.
"""

import json

import argparse
import copy
import logging
import os
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from peers import machine  # noqa: E402
from peers import artifacts, lathe_peer  # noqa: E402

TINYLLAMA = dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                 num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048, rms_norm_eps=1e-5,
                 rope_theta=10000.0, tie_word_embeddings=False)
SCHEMES = ("fp32", "int8wo", "int4g32")
# The default pipeline (grad regions opened, rotary tables folded, linears
# recomposed) and the weight-only fusions: torchao's int8 export is
# mul(mm(x, to(t(q))), scale), its int4 one dequantize_affine + linear.
TRANSFORM = "default,fuse_int8_weight_only_matmul,fuse_weight_only_quantized_linear,remove_dead_code"


def build(layers, cache_len, scheme):
    import transformers as tf
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    torch.manual_seed(0)
    config = tf.LlamaConfig(**dict(TINYLLAMA, num_hidden_layers=layers))
    model = tf.LlamaForCausalLM(config).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    if scheme != "fp32":
        from export_quantized_fixtures import SCHEMES as QUANT  # noqa: E402
        from torchao.quantization import quantize_
        from torchao.utils import unwrap_tensor_subclass

        quantize_(model, QUANT[scheme][1]())
        unwrap_tensor_subclass(model)
    model.generation_config.use_cache = True
    model.generation_config.cache_implementation = "static"
    wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=cache_len)

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = wrapped

        def forward(self, token, position):
            return self.inner(input_ids=token, cache_position=position)

    return Step().eval(), model


def streamed_bytes(model):
    """Bytes one decode step reads: every weight except the embedding table,
    of which it reads one row."""
    total = 0
    for name, t in list(model.state_dict().items()):
        if not isinstance(t, torch.Tensor):
            continue
        nbytes = t.numel() * t.element_size()
        if "embed_tokens" in name:
            nbytes = nbytes // t.shape[0] if t.dim() else nbytes
        total += nbytes
    return total


def eager_times(step, args, threads, repeat):
    torch.set_num_threads(threads)
    with torch.no_grad():
        step(*args)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = step(*args)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))], out


def one_scheme(args, scheme, bandwidth, rows):
    work = os.path.join(args.work, scheme)
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    step, model = build(args.layers, args.cache_len, scheme)
    weight_bytes = streamed_bytes(model)
    position = args.cache_len // 2
    call = (torch.tensor([[5]], dtype=torch.long), torch.tensor([position], dtype=torch.long))
    exported = os.path.join(work, lathe_peer.EXPORTED)
    archive = os.path.join(work, lathe_peer.ARCHIVE)
    ep = torch.export.export(copy.deepcopy(step), call, strict=False)
    torch.export.save(ep, exported)
    del ep
    p = subprocess.run([args.lathe, "transform", exported, "-o", archive, "--passes", TRANSFORM],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError("lathe transform: " + p.stdout.strip().splitlines()[-1])
    artifacts.save_arrays(work, "input", [a.numpy() for a in call])
    print("# %s: built, exported and transformed in %.0f s; %.2f GB streamed per token" %
          (scheme, time.time() - t0, weight_bytes / 1e9), flush=True)
    def bound_of(threads):
        return weight_bytes / (bandwidth * 1e9 * threads) * 1e3 if bandwidth else None

    for threads in args.threads:
        bound_ms = bound_of(threads)
        em, ep90, expected = eager_times(step, call, threads, args.repeat)
        rows.append((scheme, threads, "PyTorch eager", em, ep90, bound_ms, None))
        for label, backend in (("Lathe portable", None), ("Lathe XNNPACK", "xnnpack")):
            try:
                r = lathe_peer.run(args.lathe, work, backend, threads, args.repeat)
            except RuntimeError as e:
                rows.append((scheme, threads, label, None, None, bound_ms, str(e)))
                continue
            got, want = r["outputs"][0], expected.detach().numpy()
            worst = float(np.max(np.abs(got - want)) / max(1e-12, float(np.max(np.abs(want)))))
            note = "max error / max |logit| vs eager: %.1e" % worst
            rows.append((scheme, threads, label, r["median"], r["p90"], bound_ms, note))
        print_rows(rows[-3:])
    del step, model
    for label in args.peers:
        peer_rows = run_peer(args, label, scheme, bound_of)
        rows.extend(peer_rows)
        print_rows(peer_rows)


# The peers' labels, by the scheme they run for each of the bench's.
PEERS = {
    "ExecuTorch XNNPACK": {"fp32": "fp32", "int8wo": "8da8w", "int4g32": "8da4w"},
    "llama.cpp": {"fp32": "F32", "int8wo": "Q8_0", "int4g32": "Q4_0"},
}


def run_peer(args, label, scheme, bound_of):
    """Rows of ``label`` for ``scheme`` at every thread count, from a
    process of its own (peer_main)."""
    command = [sys.executable, os.path.abspath(__file__), "--peer", label, "--schemes", scheme,
               "--layers", str(args.layers), "--cache-len", str(args.cache_len), "--work", args.work,
               "--threads", ",".join(map(str, args.threads)), "--repeat", str(args.repeat)]
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    results = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    who = "%s (%s)" % (label, PEERS[label][scheme])
    if p.returncode != 0 or not results:
        why = (p.stdout.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
        return [(scheme, t, who, None, None, bound_of(t), why[:160]) for t in args.threads]
    return [(scheme, r["threads"], who, r["median"], r["p90"], bound_of(r["threads"]), r["note"]) for r in results]


def relative_error(got, want):
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    return float(np.max(np.abs(got - want)) / max(1e-12, float(np.max(np.abs(want)))))


def peer_main(args):
    """One peer on one scheme (``--peer``): prints a JSON line per thread
    count."""
    scheme = args.schemes
    work = os.path.join(args.work, scheme, "peer-" + args.peer.split()[0].lower().replace(".", ""))
    os.makedirs(work, exist_ok=True)
    step, model = build(args.layers, args.cache_len, "fp32")
    position = args.cache_len // 2
    if args.peer == "llama.cpp":
        from peers import llamacpp_peer

        with torch.no_grad():
            want = model(input_ids=torch.tensor([[5]]), use_cache=False).logits[0, -1].numpy()
        path = os.path.join(work, "model.gguf")
        llamacpp_peer.write_gguf(model, scheme, path)
        del step, model
        note = "max error / max |logit| vs fp32 eager, first token: %.1e" % relative_error(
            llamacpp_peer.first_token_logits(path), want)
        for threads in args.threads:
            r = llamacpp_peer.decode_times(path, threads, args.repeat, position=position)
            print(json.dumps(dict(threads=threads, median=r["median"], p90=r["p90"], note=note)), flush=True)
        return
    from peers import executorch_llm_peer

    call = (torch.tensor([[5]], dtype=torch.long), torch.tensor([position], dtype=torch.long))
    executorch_llm_peer.prepare(model, step, call, scheme, work)
    with torch.no_grad():
        want = step(*call).numpy()
    del step, model
    for threads in args.threads:
        r = executorch_llm_peer.decode_times(work, threads, args.repeat)
        note = "max error / max |logit| vs eager on its weights: %.1e" % relative_error(r["logits"], want)
        print(json.dumps(dict(threads=threads, median=r["median"], p90=r["p90"], note=note)), flush=True)


def print_rows(rows):
    for scheme, threads, who, med, p90, bound, note in rows:
        if med is None:
            print("| %s | %d | %s | — | — | %s |" % (scheme, threads, who, note))
            continue
        tok = 1e3 / med
        frac = "%.0f%%" % (100 * bound / med) if bound else "n/a"
        print("| %s | %d | %s | %.1f / %.1f | %.2f | %s of bound (%.1f ms) | %s |" % (
            scheme, threads, who, med, p90, tok, frac, bound or 0, note or ""), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "lathe"))
    ap.add_argument("--work", default="/tmp/lathe-llm-decode")
    ap.add_argument("--layers", type=int, default=TINYLLAMA["num_hidden_layers"])
    ap.add_argument("--cache-len", type=int, default=256)
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="the peers to run, comma-separated, or none (default: %(default)s)")
    ap.add_argument("--peer", choices=sorted(PEERS), help=argparse.SUPPRESS)  # one peer, in its own process
    args = ap.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    args.peers = [] if args.peers == "none" else args.peers.split(",")
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        ap.error("unknown peer %s; peers: %s" % (", ".join(unknown), ", ".join(PEERS)))
    if args.peer:
        return peer_main(args)
    bw = machine.measured_bandwidth()
    bandwidth = None if isinstance(bw, str) else bw[0]
    print("# streaming read, one core: %s" % ("%.1f GB/s per CPU second" % bandwidth if bandwidth else bw))
    print("# Llama (TinyLlama-1.1B config, %d layers), static cache %d, decode at position %d, torch %s" % (
        args.layers, args.cache_len, args.cache_len // 2, torch.__version__))
    print("| scheme | threads | runtime | median / p90 ms | tokens/s | vs weight-streaming bound | check |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for scheme in args.schemes.split(","):
        one_scheme(args, scheme, bandwidth, rows)


if __name__ == "__main__":
    main()
