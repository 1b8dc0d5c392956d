#!/usr/bin/env python3
"""Greedy decoding with a KV-cache LLM exported by torch.export, run by Lathe.

    python examples/llm_decode.py fixtures/llm/et_llama.pt2 [--backend xnnpack] [--tokens 32]

The program takes one token and its position per call ([1, 1] and [1],
int64) and returns logits; the KV cache is a buffer inside the program,
updated in place by each call (ExecuTorch's and transformers' export
recipes both build decoders this way). Lathe keeps that state between
`run` calls of one Program; `reset_state()` starts a new sequence.
"""
import argparse

import numpy as np

import lathe


def greedy(program, prompt, new_tokens):
    program.reset_state()
    out, token = [], prompt[0]
    for pos in range(len(prompt) + new_tokens - 1):
        (logits,) = program.run(np.array([[token]], np.int64), np.array([pos], np.int64))
        nxt = int(np.argmax(logits.reshape(-1, logits.shape[-1])[-1]))
        if pos + 1 < len(prompt):
            token = prompt[pos + 1]  # still reading the prompt
        else:
            out.append(nxt)
            token = nxt
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program")
    ap.add_argument("--prompt", default="5,17,42,8", help="comma-separated token ids")
    ap.add_argument("--tokens", type=int, default=32, help="tokens to generate")
    ap.add_argument("--backend", default=None, help="lower to this backend first (e.g. xnnpack)")
    args = ap.parse_args()
    program = lathe.load(args.program)
    if args.backend:
        program, _ = program.lower(args.backend)
    print(" ".join(map(str, greedy(program, [int(t) for t in args.prompt.split(",")], args.tokens))))


if __name__ == "__main__":
    main()
