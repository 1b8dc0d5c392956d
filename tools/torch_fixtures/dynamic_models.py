"""Models for fixtures/dynamic/: programs whose sizes are data-dependent
(unbacked symbols) or computed with symbolic arithmetic. Written by
tools/export_dynamic_fixtures.py."""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

import torch
from torch import nn
from torch._higher_order_ops.while_loop import while_loop


class DataDependentSlice(nn.Module):
    """``x[: n.item()]`` through a Linear: ``n.item()`` is an unbacked symbol
    (u0) bounded with ``torch._check`` against the dynamic row count s0 and
    scaling the head by ``u0 + 1``; the column sum is scaled by
    ``max(u0, s0 // 2)`` (floordiv on a SymInt, torch.sym_max)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= x.shape[0])
        head = torch.relu(self.proj(x[:k])) * (k + 1)
        scale = torch.sym_max(k, x.shape[0] // 2)
        return head, x.sum(0) * scale


class TanhLoop(nn.Module):
    """``torch.while_loop``: h = tanh(Linear(h)) n times (n a tensor input);
    returns the counter and h. The Linear's parameters and n reach the
    subgraphs as additional inputs; the batch is a Dim (1..16)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, n):
        def cond_fn(i, h):
            return i < n

        def body_fn(i, h):
            return i + 1, torch.tanh(self.lin(h))

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))


class CondOnShape(nn.Module):
    """``torch.cond`` on a SymBool (``x.shape[0] > 4``, _operator.gt of
    sym_size): the true branch scales by the batch size inside the
    subgraph, the false branch adds one."""

    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda x: x.cos() * x.shape[0], lambda x: x.sin() + 1, (x,))


@dataclass
class DynamicFixture:
    name: str
    description: str
    build: Callable[[], nn.Module]
    # per call: the inputs (each call runs on the same module, in order)
    calls: Callable[[torch.Generator], List[Tuple[torch.Tensor, ...]]]
    # input index -> {dim: (Dim name, min, max)}
    dynamic: Dict[int, Dict[int, Tuple[str, int, int]]] = field(default_factory=dict)
    seed: int = 0


def _slice_calls(g):
    def call(rows, n):
        return (torch.randn(rows, 8, generator=g), torch.tensor(n, dtype=torch.int64))

    # three row counts inside [2, 32], n at an inner value, the top and the bottom
    return [call(5, 3), call(12, 12), call(2, 1)]


def _loop_calls(g):
    def call(rows, n):
        return (torch.randn(rows, 4, generator=g), torch.tensor(n, dtype=torch.int64))

    # three batch sizes; three iterations, none, five
    return [call(3, 3), call(1, 0), call(7, 5)]


def _shape_calls(g):
    # batch 3 (false branch), 9 (true), 1 (false)
    return [(torch.randn(b, 4, generator=g),) for b in (3, 9, 1)]


DYNAMIC_FIXTURES = [
    DynamicFixture("data_dependent_slice", "relu(Linear(x[: n.item()])) * (u0 + 1) (unbacked u0 with torch._check), "
                   "x.sum(0) * sym_max(u0, s0 // 2); rows is a Dim (2..32)",
                   DataDependentSlice, _slice_calls, {0: {0: ("rows", 2, 32)}}),
    DynamicFixture("while_loop_tanh", "torch.while_loop: h = tanh(Linear(h)) n times (n a tensor input), returns "
                   "(n, h); batch is a Dim (1..16)", TanhLoop, _loop_calls, {0: {0: ("batch", 1, 16)}}),
    DynamicFixture("cond_on_shape", "torch.cond(x.shape[0] > 4, cos(x) * x.shape[0], sin(x) + 1): a SymBool "
                   "predicate, a size read inside the branch; batch is a Dim (1..16)", CondOnShape, _shape_calls,
                   {0: {0: ("batch", 1, 16)}}),
]
