"""`make bench-peers` (tools/bench_peers.py): Lathe against PyTorch eager,
ExecuTorch + XNNPACK and ONNX Runtime on the same models, one file per
responsibility: zoo (the models), one module per peer (prepare + run),
timing (the timed loop and the output check), machine (the physical limit),
table (the report)."""
