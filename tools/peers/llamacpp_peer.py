"""llama.cpp as a peer of the LLM decode benchmark (tools/bench_llm_decode.py):
the benchmark's model written as a GGUF, loaded and run by llama.cpp through
llama-cpp-python's bindings of its C API (the library its own tools use),
built for this CPU by scripts/setup-llm-peers.sh.

The GGUF is written here, from the transformers model in memory, rather than
by llama.cpp's convert_hf_to_gguf.py, which wants a checkpoint folder with a
real tokenizer: the architecture keys and tensors of llama.cpp's ``llama``
architecture, and a placeholder vocabulary laid out like Llama's
SentencePiece one (llama.cpp loads no model without a vocabulary; no text is
ever tokenized). The weights match the benchmark's schemes: fp32 as F32;
int8 and int4 weight-only as Q8_0 and Q4_0, llama.cpp's formats closest to
torchao's (blocks of 32 with one fp16 scale each, symmetric, where torchao's
int8 scales each output row and its int4 groups have 32 values too), for
the linear layers as torchao quantizes them; the embedding table stays F32
(torchao leaves it alone, and a step reads one row of it), the norms F32.
The KV cache is F32, as the benchmark's static cache is (llama.cpp's
default is F16), and flash attention is off: llama.cpp's flash attention
casts an F32 cache to F16 on every step (relative logit error 3e-4 instead
of 1e-6 at 2 layers, and a copy of the cache per call), while without it
attention is the same fp32 math as the benchmark's.

Timing: one prompt of ``position`` tokens fills the cache, then each call
decodes one token at ``position``, after that position is removed from the
cache (untimed), so every call does the same work, like the benchmark's
calls at a fixed cache position. Only ``llama_decode`` is timed (with
``llama_synchronize``, so the step has finished): building the graph (or
reusing the previous one, as llama.cpp does between decode steps of the
same shape), the forward pass and copying out the logits; medians and p90s
as tools/peers/timing.py computes them, after its warm-up calls (the first
also pages in the memory-mapped weights).

What llama.cpp chooses at run time stays its own: its CPU kernels quantize
the activations to 8 bits (Q8_0) for Q8_0/Q4_0 matrix products (so its
outputs differ from a float product with the same weights by that too); on
x86 with AVX2 it repacks Q4_0 weights at load into blocks interleaved 8
rows at a time (CPU_REPACK), while Q8_0 and F32 stay as stored and a
one-token step runs ggml's row dot products (llamafile's sgemm only takes
two or more tokens). Its threads meet at a barrier after every op of the
graph (about 33 per layer), so at threads = cores its times suffer far more
than PyTorch's from any other load on the machine: measure on a quiet one.
"""

import ctypes
import sys
import time

import numpy as np

# The benchmark's scheme -> (GGML type of the linear weights, GGUF file type).
SCHEMES = {"fp32": ("F32", "ALL_F32"), "int8wo": ("Q8_0", "MOSTLY_Q8_0"), "int4g32": ("Q4_0", "MOSTLY_Q4_0")}

# Every message of the last model load and run (llama.cpp logs through a
# callback): warnings and errors also go to stderr, the rest only here, for
# whoever wants to see what llama.cpp chose (buffer types, flash attention).
LOG = []

_log_callback = None  # the ctypes callback, kept alive while llama.cpp holds it
# ggml.h's enum ggml_log_level (llama_cpp exports no names for it).
_LOG_WARN, _LOG_CONT = 3, 5


# --------------------------------------------------------------------------
# Writing the GGUF

def _rotary_rows_to_pairs(w, n_heads):
    """transformers' Llama applies rotary embedding with rotate_half: within a
    head, dimension i turns with dimension i + head_dim/2. llama.cpp's
    ``llama`` architecture rotates adjacent pairs (2i, 2i+1) instead. Both
    use frequency i for the pair, so reordering the output rows of the Q and
    K projections (first half to even rows, second half to odd ones) makes
    llama.cpp compute the same attention scores."""
    rows, cols = w.shape
    half = rows // n_heads // 2
    return np.ascontiguousarray(w.reshape(n_heads, 2, half, cols).swapaxes(1, 2).reshape(rows, cols))


def _placeholder_vocab(gguf, n_vocab):
    """Tokens, scores and types of a vocabulary laid out like Llama's
    SentencePiece one: <unk>, <s>, </s>, the 256 byte tokens (llama.cpp looks
    up the newline byte when it loads an SPM vocabulary), then plain
    placeholder pieces."""
    T = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>"]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL]
    tokens += ["<0x%02X>" % b for b in range(256)]
    types += [T.BYTE] * 256
    special = len(tokens)
    if n_vocab < special:
        raise ValueError("vocabulary of %d tokens: too small for a Llama-style one" % n_vocab)
    tokens += ["\u2581t%d" % i for i in range(special, n_vocab)]
    types += [T.NORMAL] * (n_vocab - special)
    # SentencePiece scores: log-probabilities, the lower the rarer.
    scores = [0.0] * special + [-float(i) for i in range(n_vocab - special)]
    return tokens, scores, [int(t) for t in types]


def _numpy(t):
    return t.detach().float().contiguous().numpy()


def write_gguf(model, scheme, path):
    """Writes ``model`` (transformers' LlamaForCausalLM in fp32, before any
    quantization) to ``path`` as a GGUF of llama.cpp's ``llama``
    architecture, its linear weights in ``scheme``'s format (SCHEMES)."""
    import gguf

    cfg = model.config
    rope = dict(getattr(cfg, "rope_parameters", None) or {})
    rope_theta = rope.get("rope_theta", getattr(cfg, "rope_theta", None))
    # What the ``llama`` architecture cannot express: refuse, rather than
    # write a model that computes something else.
    if rope.get("rope_type", "default") != "default":
        raise ValueError("rope scaling %r is not written" % rope.get("rope_type"))
    if cfg.hidden_act != "silu" or getattr(cfg, "attention_bias", False) or getattr(cfg, "mlp_bias", False):
        raise ValueError("only SiLU MLPs and bias-free projections are written")
    n_heads, n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    wtype, ftype = SCHEMES[scheme]
    wtype = gguf.GGMLQuantizationType[wtype]

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("lathe-bench-llama")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(n_heads)
    w.add_head_count_kv(n_kv)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(float(rope_theta))
    w.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(int(gguf.LlamaFileType[ftype]))

    tokens, scores, types = _placeholder_vocab(gguf, cfg.vocab_size)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def linear(name, weight, rotary_heads=None):
        a = _numpy(weight)
        if rotary_heads:
            a = _rotary_rows_to_pairs(a, rotary_heads)
        if wtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, a)
        else:
            w.add_tensor(name, gguf.quants.quantize(a, wtype), raw_dtype=wtype)

    # The writer keeps the arrays until it writes them; F32 ones are views of
    # the model's parameters, so only the converted ones take more memory.
    inner = model.model
    w.add_tensor("token_embd.weight", _numpy(inner.embed_tokens.weight))
    for i, layer in enumerate(inner.layers):
        att, mlp, b = layer.self_attn, layer.mlp, "blk.%d." % i
        w.add_tensor(b + "attn_norm.weight", _numpy(layer.input_layernorm.weight))
        linear(b + "attn_q.weight", att.q_proj.weight, rotary_heads=n_heads)
        linear(b + "attn_k.weight", att.k_proj.weight, rotary_heads=n_kv)
        linear(b + "attn_v.weight", att.v_proj.weight)
        linear(b + "attn_output.weight", att.o_proj.weight)
        w.add_tensor(b + "ffn_norm.weight", _numpy(layer.post_attention_layernorm.weight))
        linear(b + "ffn_gate.weight", mlp.gate_proj.weight)
        linear(b + "ffn_up.weight", mlp.up_proj.weight)
        linear(b + "ffn_down.weight", mlp.down_proj.weight)
    w.add_tensor("output_norm.weight", _numpy(inner.norm.weight))
    linear("output.weight", model.lm_head.weight)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# --------------------------------------------------------------------------
# Running it

def _llama():
    """llama_cpp's C bindings, the backend initialized and its log routed to
    LOG (warnings and errors also to stderr)."""
    global _log_callback
    import llama_cpp as L

    if _log_callback is None:
        level = [0]  # a CONT message continues the previous one, at its level

        def keep(lvl, text, _user):
            if lvl != _LOG_CONT:
                level[0] = lvl
            msg = text.decode("utf-8", "replace") if text else ""
            LOG.append(msg)
            if level[0] >= _LOG_WARN:
                sys.stderr.write(msg)

        _log_callback = L.llama_log_callback(keep)
        L.llama_log_set(_log_callback, ctypes.c_void_p(0))
        L.llama_backend_init()
    return L


class _Session:
    """A loaded model and one context (sequence 0), freed on exit."""

    def __init__(self, path, threads, n_ctx):
        self.L = L = _llama()
        del LOG[:]
        self.model = L.llama_model_load_from_file(str(path).encode(), L.llama_model_default_params())
        if not self.model:
            raise RuntimeError("llama.cpp could not load %s: %s" % (path, "".join(LOG[-5:]).strip()))
        p = L.llama_context_default_params()
        p.n_ctx = p.n_batch = n_ctx  # a prompt up to the context's length in one call
        p.n_threads = p.n_threads_batch = threads
        p.type_k = p.type_v = L.GGML_TYPE_F32
        p.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_DISABLED  # see the module's docstring
        self.ctx = L.llama_init_from_model(self.model, p)
        if not self.ctx:
            L.llama_model_free(self.model)
            raise RuntimeError("llama.cpp could not create a context: %s" % "".join(LOG[-5:]).strip())
        self.memory = L.llama_get_memory(self.ctx)
        self.n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(self.model))

    def batch(self, tokens, first_pos):
        """A batch of ``tokens`` at positions first_pos..., sequence 0, the
        logits of its last token asked for."""
        b = self.L.llama_batch_init(max(1, len(tokens)), 0, 1)
        b.n_tokens = len(tokens)
        for i, t in enumerate(tokens):
            b.token[i] = t
            b.pos[i] = first_pos + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = int(i == len(tokens) - 1)
        return b

    def decode(self, batch):
        rc = self.L.llama_decode(self.ctx, batch)
        if rc != 0:
            raise RuntimeError("llama_decode returned %d: %s" % (rc, "".join(LOG[-5:]).strip()))
        self.L.llama_synchronize(self.ctx)

    def last_logits(self):
        ptr = self.L.llama_get_logits_ith(self.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).astype(np.float32, copy=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.L.llama_free(self.ctx)
        self.L.llama_model_free(self.model)


def decode_times(path, threads, repeat, position=128, token=5):
    """{"median", "p90"} in ms of ``repeat`` one-token decode steps at cache
    position ``position`` (the cache filled before it), on ``threads``
    threads."""
    from peers.timing import WARMUP, percentiles

    with _Session(path, threads, n_ctx=max(256, position + 1)) as s:
        if position:
            prompt = s.batch([token] * position, 0)
            try:
                s.decode(prompt)
            finally:
                s.L.llama_batch_free(prompt)
        step = s.batch([token], position)
        try:
            times = []
            for i in range(WARMUP + repeat):
                # Drop the step's own cache entry, so each step appends to a
                # cache of exactly ``position`` tokens.
                s.L.llama_memory_seq_rm(s.memory, 0, position, -1)
                t0 = time.perf_counter()
                s.decode(step)
                if i >= WARMUP:
                    times.append((time.perf_counter() - t0) * 1e3)
        finally:
            s.L.llama_batch_free(step)
    median, p90 = percentiles(times)
    return {"median": median, "p90": p90}


def first_token_logits(path, token=5, threads=1):
    """The logits (float32 [vocab]) of decoding ``token`` at position 0 from
    an empty cache: what transformers' ``model(input_ids=[[token]])`` gives,
    to check the conversion."""
    return last_logits(path, [token], threads)


def last_logits(path, tokens, threads=1):
    """The logits (float32 [vocab]) of the last of ``tokens``, decoded as one
    prompt from an empty cache: transformers' ``model(input_ids=[tokens])``
    logits[0, -1]. At position 0 rotary embedding is the identity and
    attention returns V whatever Q and K are, so only a longer prompt checks
    the Q/K row order and the rotary settings."""
    with _Session(path, threads, n_ctx=max(256, len(tokens))) as s:
        b = s.batch(list(tokens), 0)
        try:
            s.decode(b)
        finally:
            s.L.llama_batch_free(b)
        return s.last_logits()
