import os
from typing import Any, Sequence

__version__: str  # CMakeLists.txt's project(VERSION)

class Error(Exception):
    """Every Lathe failure, with the message the `lathe` command prints."""

class Explanation:
    """One candidate a pass looked at: rewritten, or kept and why."""
    @property
    def method(self) -> str: ...
    @property
    def pass_name(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def rewritten(self) -> bool: ...
    @property
    def message(self) -> str: ...

class LoweringDecision:
    """One node as lowering saw it: claimed into a delegate or not, and why.
    str() is its `lathe lower --explain` line."""
    @property
    def method(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def op(self) -> str: ...  # "aten.mm.default"
    @property
    def claimed(self) -> bool: ...
    @property
    def delegate(self) -> int | None: ...  # the delegate it went into (per method); None when not claimed
    @property
    def reason(self) -> str: ...  # claimed: what the backend makes of it; not claimed: why not

class Partition:
    """One group of nodes a backend claimed, as its preprocess() made it (Program.partitions)."""
    @property
    def method(self) -> str: ...
    @property
    def delegate(self) -> int: ...  # LoweringDecision.delegate of its nodes
    @property
    def nodes(self) -> list[str]: ...  # the claimed nodes, in graph order
    @property
    def inputs(self) -> list[str]: ...  # what it reads, in the order execute() receives them
    @property
    def constants(self) -> list[str]: ...  # those inputs that are compile-time constants
    @property
    def outputs(self) -> list[str]: ...
    @property
    def payload(self) -> bytes: ...  # what preprocess() returned

class Value:
    """A value of a graph: a tensor, a symbolic scalar, a token. Equal to every other lookup of itself."""
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "tensor", "sym_int", ...
    @property
    def producer(self) -> Node | None: ...  # None for a graph input
    @property
    def users(self) -> list[Node]: ...
    @property
    def dtype(self) -> str | None: ...  # "float32"; None for non-tensors
    @property
    def shape(self) -> list[int | str] | None: ...  # symbolic sizes as their expressions

class Node:
    """A call in a graph. Equal to every other lookup of itself."""
    @property
    def name(self) -> str: ...
    @property
    def target(self) -> str: ...  # "aten.mul.Tensor"
    @property
    def args(self) -> list[Any]: ...  # positional arguments: Values and Python literals
    @property
    def kwargs(self) -> dict[str, Any]: ...  # keyword-only arguments
    @property
    def arguments(self) -> dict[str, Any]: ...  # every argument by its schema name
    @property
    def outputs(self) -> list[Value]: ...
    @property
    def meta(self) -> dict[str, str]: ...  # stack_trace, nn_module_stack, ...

class Graph:
    """A read-only view of one method's graph."""
    @property
    def nodes(self) -> list[Node]: ...
    @property
    def inputs(self) -> list[Value]: ...
    @property
    def outputs(self) -> list[Any]: ...
    @property
    def signature(self) -> dict[str, list[tuple[str, Any, str]]]: ...
    def __len__(self) -> int: ...

class Rewriter:
    """The only way a Pass changes a method; valid while the pass runs."""
    @property
    def graph(self) -> Graph: ...
    def create_call(
        self, target: str, args: Sequence[Any], kwargs: dict[str, Any] | None = None,
        like: Value | None = None, before: Node | None = None,
    ) -> Value: ...
    def replace_node(self, node: Node, target: str, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> Value: ...
    def replace_all_uses(self, old: Value, new: Value) -> None: ...
    def erase(self, node: Node) -> None: ...
    def constness(self, value: Value) -> str: ...  # "parameter", "buffer", "mutable buffer", "lifted constant", "user input", "computed"
    def is_constant(self, value: Value) -> tuple[bool, str]: ...  # a compile-time constant weight, and what it is or why not
    def explain(self, node: Node, rewritten: bool, message: str) -> None: ...

class Pass:
    """Subclass with a `name` and `run(self, rw) -> bool`; see lathe.Pass."""
    name: str
    description: str
    def run(self, rw: Rewriter) -> bool: ...

class Subgraph:
    """What Backend.preprocess receives: the claimed nodes and the values they read and return."""
    @property
    def nodes(self) -> list[Node]: ...
    @property
    def inputs(self) -> list[Value]: ...  # the delegate's operands, in order
    @property
    def outputs(self) -> list[Value]: ...
    @property
    def constants(self) -> dict[str, Any]: ...  # input name -> numpy array, for compile-time constants

class Backend:
    """Subclass with `name`, `support(node)` and `preprocess(subgraph)`; see lathe.Backend."""
    name: str
    keep: list[str]
    constant_args: dict[str, list[str]]
    def support(self, node: Node) -> str | None: ...
    def preprocess(self, subgraph: Subgraph) -> bytes: ...

def register_backend(backend: Backend) -> None: ...

class Program:
    """A loaded .pt2: named methods. Immutable: transform and lower return new programs."""
    @property
    def methods(self) -> list[str]: ...
    def inspect(self) -> dict[str, Any]:
        """What `lathe inspect --json` prints."""
    def graph(self, method: str | None = None) -> Graph: ...
    def transform(
        self,
        passes: str | Sequence[str | Pass] = "default",
        keep: Sequence[str] = (),
        method: str | None = None,
        verify: bool = False,
    ) -> tuple[Program, list[Explanation]]: ...
    def lower(self, backend: str = "xnnpack", method: str | None = None) -> tuple[Program, list[LoweringDecision]]:
        """The lowered program, and one decision per node of each lowered method, in graph order."""
    def partitions(self, backend: str = "xnnpack", method: str | None = None) -> list[Partition]:
        """What lower() would claim and hand the backend, for your own serializer; this program is left as it is."""
    def save(self, path: str | os.PathLike[str], format: str = "2.9") -> None: ...
    def to_bytes(self, format: str = "2.9") -> bytes: ...
    def run(self, *inputs: Any, method: str | None = None) -> tuple[Any, ...]:
        """User inputs in signature order (numpy arrays, torch tensors, numbers), viewed without copying.
        Returns the user outputs: numpy arrays, or torch tensors when any input was a tensor."""
    def reset_state(self, method: str | None = None) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Program: ...
    def __exit__(self, *args: object) -> None: ...
    def to_exported_program(self) -> Any:
        """A torch.export.ExportedProgram (imports torch)."""

def load(source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> Program: ...
def from_exported_program(ep: Any) -> Program: ...
def passes() -> list[tuple[str, str]]: ...
def backends() -> list[str]: ...
def verified_torch_versions() -> list[str]:
    """The PyTorch releases Lathe is verified against, oldest first (["2.13.0", "2.14.1"])."""
def set_threads(threads: int) -> None:
    """Intra-op threads: one pool for the portable kernels and every delegate (default 1)."""
def num_threads() -> int: ...
