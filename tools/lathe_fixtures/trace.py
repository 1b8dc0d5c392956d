"""ATen-level capture of one method of an ``nn.Module`` with PyTorch 1.13.

torch 1.13 has no ``torch.export``. We get the same shape of program by
hand:

1. every parameter and buffer becomes a graph input (order: parameters,
   buffers, then user inputs -- as ``torch.export`` lifts them);
2. the method is run under ``functorch.functionalize`` (views kept, in-place
   ops rewritten to their functional forms) and traced with ``make_fx``;
3. the copy-back nodes that functionalization appends for mutated inputs
   (``aten.copy_(buffer, new_value)``) are removed and ``new_value`` becomes
   a ``buffer_mutation`` output, placed before the user outputs;
4. tensors that the trace captured as attributes (``get_attr``: plain tensor
   attributes of the module) are lifted to ``tensor_constant`` inputs placed
   after the buffers and before the user inputs;
5. dead code (unused ``getitem`` nodes, ``empty`` scratch tensors) is removed;
6. the graph is run once on the real inputs, so every value has a concrete
   tensor (sizes, strides, dtype) for ``tensor_values``.
"""

import copy
import inspect
import operator
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils.stateless import _reparametrize_module

try:  # torch 1.13 ships functorch as a separate package
    from functorch import functionalize as _functionalize
except ImportError:  # pragma: no cover - newer torch
    from torch.func import functionalize as _functionalize

aten = torch.ops.aten


def _reshape_alias_as_view(x, size, stride):
    # 1.13's flatten/reshape of a contiguous tensor records the internal
    # ``_reshape_alias``; torch.export graphs carry ``view`` for it.
    return aten.view.default(x, size)


# Decompositions applied while tracing. Kept tiny on purpose: the goal is the
# op set a torch.export ATen graph has, not a core-ATen decomposition.
DEFAULT_DECOMPOSITIONS: Dict[Any, Callable] = {
    aten._reshape_alias.default: _reshape_alias_as_view,
}


@dataclass
class InputSlot:
    """One graph input, in signature order."""

    kind: str  # "parameter" | "buffer" | "tensor_constant" | "user_input"
    name: str  # placeholder name as torch.export spells it
    node: fx.Node
    target: Optional[str] = None  # fqn for parameter / buffer / constant
    persistent: Optional[bool] = None  # buffers only
    value: Optional[torch.Tensor] = None  # the lifted tensor (not user inputs)


@dataclass
class OutputSlot:
    """One graph output, in signature order."""

    kind: str  # "buffer_mutation" | "user_output"
    node: fx.Node
    target: Optional[str] = None  # buffer fqn for buffer_mutation


@dataclass
class TracedMethod:
    method: str
    gm: fx.GraphModule
    inputs: List[InputSlot]
    outputs: List[OutputSlot]
    names: Dict[fx.Node, str]  # serialized value name of every value node
    example_args: Tuple[Any, ...]
    in_spec: Any  # torch.utils._pytree.TreeSpec of ((args...), {})
    out_spec: Any  # TreeSpec of the method's return value
    forward_arg_names: List[str]
    # fqn -> tensor, as torch.export puts them in ep.state_dict / ep.constants
    state_dict: "OrderedDict[str, torch.Tensor]"
    constants: "OrderedDict[str, torch.Tensor]"
    node_values: Dict[fx.Node, Any] = field(default_factory=dict)

    # -- convenience -----------------------------------------------------
    @property
    def user_inputs(self) -> List[InputSlot]:
        return [s for s in self.inputs if s.kind == "user_input"]

    @property
    def user_outputs(self) -> List[OutputSlot]:
        return [s for s in self.outputs if s.kind == "user_output"]

    @property
    def mutations(self) -> List[OutputSlot]:
        return [s for s in self.outputs if s.kind == "buffer_mutation"]

    def op_histogram(self) -> "OrderedDict[str, int]":
        counts: Dict[str, int] = {}
        for n in self.gm.graph.nodes:
            if n.op == "call_function" and n.target is not operator.getitem:
                key = op_name(n.target)
                counts[key] = counts.get(key, 0) + 1
        return OrderedDict(sorted(counts.items()))

    def run(self, state: Dict[str, torch.Tensor], args: Sequence[Any]):
        """Run the traced graph. ``state`` maps fqn -> tensor for the lifted
        inputs (defaults to the captured values). Returns
        (mutations: {buffer fqn: tensor}, user outputs: list)."""
        flat = []
        for s in self.inputs:
            if s.kind == "user_input":
                continue
            flat.append(state.get(s.target, s.value))
        flat.extend(args)
        with torch.no_grad():
            outs = _Capture(self.gm).run(*flat)
        muts = OrderedDict()
        users = []
        for slot, val in zip(self.outputs, outs):
            if slot.kind == "buffer_mutation":
                muts[slot.target] = val
            else:
                users.append(val)
        return muts, users


def op_name(target) -> str:
    """``torch.ops.aten.addmm.default`` for an OpOverload."""
    if isinstance(target, torch._ops.OpOverload):
        ns, _, name = target._schema.name.partition("::")
        return "torch.ops.%s.%s.%s" % (ns, name, target._overloadname)
    if isinstance(target, str):
        return target
    return "%s.%s" % (target.__module__, target.__name__)


class _Capture(fx.Interpreter):
    """Interpreter that remembers every node's value."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values: Dict[fx.Node, Any] = {}

    def run_node(self, n):
        r = super().run_node(n)
        self.values[n] = r
        return r


def _owner_and_leaf(module: torch.nn.Module, fqn: str):
    parts = fqn.split(".")
    owner = module
    for p in parts[:-1]:
        owner = getattr(owner, p)
    return owner, parts[-1]


def _find_tensor_attr(module: torch.nn.Module, t: torch.Tensor) -> Optional[str]:
    """fqn of a plain (non-parameter, non-buffer) tensor attribute that is
    ``t`` itself."""
    for mod_name, mod in module.named_modules():
        for attr, val in vars(mod).items():
            if not isinstance(val, torch.Tensor):
                continue
            if val is t:
                return (mod_name + "." if mod_name else "") + attr
    return None


def _named_tensors(module: torch.nn.Module, table: str) -> List[Tuple[str, torch.Tensor]]:
    """(fqn, tensor) for every entry of ``_parameters`` / ``_buffers`` of
    every submodule, duplicates (tied tensors, shared submodules) included."""
    out = []
    for mod_name, mod in module.named_modules(remove_duplicate=False):
        for name, t in getattr(mod, table).items():
            if t is not None:
                out.append(((mod_name + "." if mod_name else "") + name, t))
    return out


def _first_names(named: List[Tuple[str, torch.Tensor]]) -> List[Tuple[str, torch.Tensor]]:
    seen = set()
    out = []
    for fqn, t in named:
        if id(t) not in seen:
            seen.add(id(t))
            out.append((fqn, t))
    return out


def _sanitize(fqn: str) -> str:
    return fqn.replace(".", "_")


def _forward_arg_names(fn, n_args: int) -> List[str]:
    names: List[str] = []
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            while len(names) < n_args:
                names.append("%s_%d" % (p.name, len(names)))
    while len(names) < n_args:
        names.append("arg%d" % len(names))
    return names[:n_args]


def trace_method(
    module: torch.nn.Module,
    method: str,
    args: Sequence[Any],
    prune_unused_state: bool = False,
    decompositions: Optional[Dict[Any, Callable]] = None,
) -> TracedMethod:
    """Trace ``getattr(module, method)(*args)`` into an export-style program.

    ``prune_unused_state`` drops parameters/buffers the method never reads
    (used for multi-method archives, so each method carries its own state).
    """
    if decompositions is None:
        decompositions = DEFAULT_DECOMPOSITIONS
    args = tuple(args)
    fn = getattr(module, method)

    # Every name a parameter/buffer is reachable by (tied weights have two);
    # the first name is the one lifted, the others alias its input.
    all_params = _named_tensors(module, "_parameters")
    all_buffers = _named_tensors(module, "_buffers")
    params = _first_names(all_params)
    buffers = _first_names(all_buffers)
    persistent_names = set(module.state_dict().keys())
    fqns = [n for n, _ in params] + [n for n, _ in buffers]
    n_state = len(fqns)
    index_of = {id(t): i for i, (_, t) in enumerate(params + buffers)}
    reparam = [(fqn, index_of[id(t)]) for fqn, t in all_params + all_buffers]

    spec_box: Dict[str, Any] = {}

    def flat_fn(*flat):
        state = {fqn: flat[i] for fqn, i in reparam}
        with _reparametrize_module(module, state):
            out = fn(*flat[n_state:])
        leaves, spec = pytree.tree_flatten(out)
        spec_box["out"] = spec
        for leaf in leaves:
            if not isinstance(leaf, torch.Tensor):
                raise TypeError("%s.%s returned a non-tensor leaf %r" % (type(module).__name__, method, leaf))
        return tuple(leaves)

    # Clones: make_fx runs the real ops, and the functionalization epilogue
    # would otherwise write into the module's own buffers.
    trace_inputs = [p.detach().clone() for _, p in params]
    trace_inputs += [b.detach().clone() for _, b in buffers]
    trace_inputs += [a.clone() if isinstance(a, torch.Tensor) else a for a in args]

    with torch.no_grad():
        gm = make_fx(_functionalize(flat_fn, remove="mutations"), decomposition_table=decompositions)(*trace_inputs)
    graph = gm.graph

    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == n_state + len(args), (len(placeholders), n_state, len(args))

    # -- 1. slots for lifted state and user inputs --------------------------
    slots: List[InputSlot] = []
    for (fqn, p), node in zip(params, placeholders[: len(params)]):
        slots.append(InputSlot("parameter", "p_" + _sanitize(fqn), node, fqn, None, p))
    for (fqn, b), node in zip(buffers, placeholders[len(params) : n_state]):
        slots.append(InputSlot("buffer", "b_" + _sanitize(fqn), node, fqn, fqn in persistent_names, b))
    arg_names = _forward_arg_names(fn, len(args))
    user_slots = [
        InputSlot("user_input", name, node) for name, node in zip(arg_names, placeholders[n_state:])
    ]
    slot_of = {s.node: s for s in slots + user_slots}

    # -- 2. copy-back nodes -> buffer mutations ------------------------------
    mutated: Dict[fx.Node, fx.Node] = {}
    for n in list(graph.nodes):
        if n.op == "call_function" and n.target is aten.copy_.default and n.args[0].op == "placeholder":
            dst, src = n.args[0], n.args[1]
            slot = slot_of[dst]
            if slot.kind != "buffer":
                raise NotImplementedError(
                    "%s.%s mutates %s %s in place; only buffer mutation is supported"
                    % (type(module).__name__, method, slot.kind, slot.target or slot.name)
                )
            if len(n.users) != 0:
                raise AssertionError("copy-back node %s has users" % n.name)
            mutated[dst] = src
            graph.erase_node(n)
    for n in graph.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            if n.target._schema.is_mutable:
                raise AssertionError("in-place op left after functionalization: %s" % n.format_node())

    # -- 3. get_attr tensors -> lifted tensor constants ------------------------
    const_slots: List[InputSlot] = []
    anon = 0
    first_user = user_slots[0].node if user_slots else None
    last_state = placeholders[n_state - 1] if n_state else None
    for n in list(graph.nodes):
        if n.op != "get_attr":
            continue
        val = getattr(gm, n.target)
        if not isinstance(val, torch.Tensor):
            raise NotImplementedError("get_attr of non-tensor %r" % (val,))
        fqn = _find_tensor_attr(module, val)
        if fqn is None:
            fqn = "lifted_tensor_%d" % anon
            anon += 1
        if first_user is not None:
            ctx = graph.inserting_before(first_user)
        elif const_slots:
            ctx = graph.inserting_after(const_slots[-1].node)
        elif last_state is not None:
            ctx = graph.inserting_after(last_state)
        else:
            ctx = graph.inserting_before(next(iter(graph.nodes)))
        with ctx:
            ph = graph.placeholder("c_" + _sanitize(fqn))
        n.replace_all_uses_with(ph)
        graph.erase_node(n)
        delattr(gm, n.target)
        const_slots.append(InputSlot("tensor_constant", "c_" + _sanitize(fqn), ph, fqn, None, val))

    # -- 4. outputs: mutations first, then user outputs ------------------------
    out_node = next(n for n in graph.nodes if n.op == "output")
    user_vals = out_node.args[0]
    if isinstance(user_vals, fx.Node):
        user_vals = (user_vals,)
    user_vals = list(user_vals)
    out_slots: List[OutputSlot] = []
    for s in slots:
        if s.node in mutated:
            out_slots.append(OutputSlot("buffer_mutation", mutated[s.node], s.target))
    for v in user_vals:
        if not isinstance(v, fx.Node):
            raise NotImplementedError("constant user output %r" % (v,))
        out_slots.append(OutputSlot("user_output", v))
    graph.erase_node(out_node)
    graph.output(tuple(s.node for s in out_slots))

    # -- 5. dead code; optionally unused state ---------------------------------
    graph.eliminate_dead_code()
    all_slots = slots + const_slots + user_slots
    if prune_unused_state:
        keep = []
        for s in all_slots:
            if s.kind != "user_input" and not s.node.users:
                graph.erase_node(s.node)
            else:
                keep.append(s)
        all_slots = keep
    graph.lint()
    gm.recompile()

    # Final signature order = placeholder order in the graph.
    by_node = {s.node: s for s in all_slots}
    inputs = [by_node[n] for n in graph.nodes if n.op == "placeholder"]
    kinds = [s.kind for s in inputs]
    order = {"parameter": 0, "buffer": 1, "tensor_constant": 2, "user_input": 3}
    assert kinds == sorted(kinds, key=order.__getitem__), kinds

    names = _assign_names(graph, inputs)

    # -- 6. state dict / constants as torch.export keeps them -----------------
    # Parameters then persistent buffers, tied aliases included under every
    # name (as ep.state_dict has them); the alias shares the weight file.
    lifted_ids = {id(s.value) for s in inputs if s.kind in ("parameter", "buffer") and s.persistent is not False}
    state_dict: "OrderedDict[str, torch.Tensor]" = OrderedDict()
    for fqn, t in all_params + all_buffers:
        if id(t) in lifted_ids and (fqn in persistent_names):
            state_dict[fqn] = t
    constants: "OrderedDict[str, torch.Tensor]" = OrderedDict()
    for s in inputs:
        if s.kind == "buffer" and not s.persistent:
            constants[s.target] = s.value
        elif s.kind == "tensor_constant":
            constants[s.target] = s.value

    in_spec = pytree.tree_flatten((args, {}))[1]
    tm = TracedMethod(
        method=method,
        gm=gm,
        inputs=inputs,
        outputs=out_slots,
        names=names,
        example_args=args,
        in_spec=in_spec,
        out_spec=spec_box["out"],
        forward_arg_names=arg_names,
        state_dict=state_dict,
        constants=constants,
    )

    # -- 7. concrete values for every node --------------------------------------
    flat = [s.value for s in inputs if s.kind != "user_input"] + list(args)
    cap = _Capture(gm)
    with torch.no_grad():
        cap.run(*flat)
    tm.node_values = cap.values
    return tm


def _assign_names(graph: fx.Graph, inputs: List[InputSlot]) -> Dict[fx.Node, str]:
    """Serialized names: placeholders as torch.export names them, every
    other node keeps its FX name (made unique against the placeholders)."""
    names: Dict[fx.Node, str] = {}
    used = set()
    for s in inputs:
        if s.name in used:
            raise AssertionError("duplicate placeholder name %s" % s.name)
        names[s.node] = s.name
        used.add(s.name)
    for n in graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        base = n.name
        name = base
        i = 1
        while name in used:
            name = "%s_%d" % (base, i)
            i += 1
        names[n] = name
        used.add(name)
    return names


def eager_calls(module: torch.nn.Module, method: str, calls: Sequence[Sequence[Any]]):
    """Run the ORIGINAL module eagerly on a deep copy, one call per element
    of ``calls``, state carried between calls. Returns a list of
    (flat user outputs, {buffer fqn: value after the call})."""
    m = copy.deepcopy(module)
    fn = getattr(m, method)
    results = []
    with torch.no_grad():
        for args in calls:
            out = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
            leaves, _ = pytree.tree_flatten(out)
            bufs = OrderedDict((n, b.detach().clone()) for n, b in m.named_buffers())
            results.append(([l.detach().clone() for l in leaves], bufs))
    return results
