"""Reading and checking one program before the executor compiles it (``sandbox.inside.executor``).

A program is read (MLIR verifies it as it parses), every op of it (nested regions and private functions
included) walked into a summary, and refused (``Refused``, with the rule it broke as ``kind``) when it must
never be compiled: a Python host callback, an op, attribute or kernel region JAX's own lowerings do not make
(``sandbox.inside.op_policy``), a custom call that is not exactly one JAX's own lowering makes
(``sandbox.inside.contracts``), a broken op rule of the judge's ``precheck``, inputs that do not match the
case's leaves, or outputs over the cap. Which inputs the program may update in place is decided here too.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from sandbox.inside.contracts import BrokenContract, Contracts, check_partitioning
from sandbox.inside.lowering import parse as parse_module
from sandbox.inside.op_policy import Policy, PolicyViolation
from sandbox.inside.perturb import perturb_loops
from sandbox.inside.remat import remat_summary
from sandbox.shared.wire import DTYPES

#: Dialects a program may use. Anything else (llvm, gpu, ...) is refused before compiling.
ALLOWED_PREFIXES = ("stablehlo.", "chlo.", "func.", "sdy.")
ALLOWED_OPS = frozenset({"builtin.module"})
#: StableHLO ops that talk to the host or other devices: never needed to compute an answer.
FORBIDDEN_OPS = frozenset({"stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"})
#: Custom-call targets of Python host callbacks (jax.pure_callback, io_callback, jax.debug.*).
HOST_CALLBACK_TARGETS = frozenset(
    {
        "xla_python_cpu_callback",
        "xla_ffi_python_cpu_callback",
        "xla_python_gpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_ffi_partitioned_python_cpu_callback",
    }
)
#: Partitioning annotations that compile to nothing on one device (on several, checked: ``contracts``).
_ANNOTATIONS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})

#: MLIR element type -> wire dtype name.
ELEMENT_TYPES = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
    "i1": "bool",
    "complex<f32>": "complex64",
}


class Refused(Exception):
    """A program the executor will not compile; ``kind`` tells the judge which rule it broke."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def allowed_custom_calls() -> frozenset[str]:
    """jax.export's custom-call targets guaranteed stable that run on CPU (LAPACK), plus annotations."""
    try:
        from jax._src.export._export import _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE as stable
    except ImportError:  # moved in another JAX version: LAPACK calls are then refused, never guessed at
        stable = set()
    return frozenset({t for t in stable if t.startswith("lapack_")} | _ANNOTATIONS)


def first_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line: its type and the first line of its text."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:limit]}" if text else type(exc).__name__


class ProgramChecker:
    """Reads and checks programs for one executor: its MLIR modules (``ir``, ``mlir``), its op ``policy``
    and custom-call ``contracts``, and its device count (``partitions``)."""

    def __init__(self, ir: Any, mlir: Any, policy: Policy, contracts: Contracts, partitions: int) -> None:
        self.ir, self.mlir, self.policy, self.contracts = ir, mlir, policy, contracts
        self.partitions = partitions

    def parse(self, data: bytes) -> Any:
        try:
            return parse_module(self.ir, data)
        except Exception as exc:
            text = f"the program is not a valid MLIR module: {first_line(exc)}"
            raise Refused("unreadable", text) from None

    def main(self, module: Any) -> Any:
        mains = [
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and str(op.operation.attributes["sym_name"]).strip('"') == "main"
        ]
        if len(mains) != 1:
            raise Refused("unreadable", "the program has no single `main` function")
        return mains[0]

    def check(self, module: Any, summary: dict[str, Any], message: dict[str, Any]) -> None:
        """Refuse what must never be compiled, then match the inputs and bound the outputs."""
        if summary["host_callbacks"]:
            raise Refused(
                "host_callback",
                f"the program calls back into Python on the host ({', '.join(summary['host_callbacks'])})",
            )
        try:
            self.policy.check(module)  # every op, attribute and kernel region: JAX's own, before any compile
        except PolicyViolation as exc:
            raise Refused("op", str(exc)) from None
        try:
            self.contracts.check(module)  # every call's target, types and attributes, before any compile
            if self.partitions > 1:
                check_partitioning(self.ir, module, self.partitions)
        except BrokenContract as exc:
            raise Refused("custom_call", str(exc)) from None
        for name in summary["ops"]:
            if name in FORBIDDEN_OPS or not (name in ALLOWED_OPS or name.startswith(ALLOWED_PREFIXES)):
                raise Refused("op", f"the program uses the operation {name!r}, which the judge does not run")
        broken = _precheck(summary, message.get("precheck"))
        if broken is not None:
            raise Refused("rule", broken)
        main = self.main(module)
        inputs = tensor_types(self.ir, main, "inputs")
        expected = [(str(s["dtype"]), tuple(int(d) for d in s["shape"])) for s in message["inputs"]]
        if len(inputs) > len(expected):
            raise Refused(
                "extra_inputs",
                f"the program takes {len(inputs)} inputs but the case has {len(expected)} leaves",
            )
        if inputs != expected:
            raise Refused(
                "inputs", "the program's inputs do not match the case's leaves (count, shapes, dtypes)"
            )
        outputs = tensor_types(self.ir, main, "results")
        total = sum(
            int(np.prod(shape, dtype=np.float64)) * DTYPES[dtype].itemsize for dtype, shape in outputs
        )
        if total > int(message["max_output_bytes"]):
            raise Refused("output_limit", f"the function returns {total} bytes of arrays")

    def donate(self, module: Any, wanted: Any, data: bytes) -> tuple[int, bytes]:
        """Decide which inputs the program may update in place: the ones the judge names in ``donate``
        (flat input indices; ``jax.jit``'s ``donate_argnames`` of a problem's in-place rule), marked as
        buffer donors on ``main`` for XLA to alias with outputs. Aliasing the module declares itself
        (``tf.aliasing_output``, ``jax.buffer_donor``) is dropped first: it is not the tracer's to decide.
        Returns the donated bytes and the module's bytes (written again when the attributes changed, for
        the pipeline that compiles from bytes)."""
        ir = self.ir
        main = self.main(module)
        inputs = tensor_types(ir, main, "inputs")
        indices = wanted if isinstance(wanted, list) else []
        if any(not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(inputs) for i in indices):
            raise ValueError(f"donate names inputs the program does not have: {str(wanted)[:80]}")
        old = main.attributes.get("arg_attrs", None)
        attrs: list[dict[str, Any]] = []
        changed = bool(indices)
        for i in range(len(inputs)):
            entries = {a.name: a.attr for a in ir.DictAttr(old[i])} if old is not None else {}
            for name in _ALIASING_ATTRIBUTES:
                changed |= entries.pop(name, None) is not None
            if i in indices:
                entries["jax.buffer_donor"] = ir.BoolAttr.get(True)
            attrs.append(entries)
        if not changed:
            return 0, data
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
        donated = sum(
            int(np.prod(inputs[i][1], dtype=np.float64)) * DTYPES[inputs[i][0]].itemsize for i in set(indices)
        )
        return donated, bytes(self.mlir.module_to_bytecode(module))

    def variant(self, data: bytes) -> bytes | None:
        """The loop check's variant of the program (``sandbox.inside.perturb``) as bytes, parsed afresh
        from the program's own bytes; None on several devices (not checked there)."""
        if self.partitions > 1:
            return None
        from jax._src.lib.mlir.dialects import hlo  # type: ignore[attr-defined]

        variant = self.parse(data)
        perturb_loops(self.ir, hlo, variant)
        return bytes(self.mlir.module_to_bytecode(variant))


def summarize(ir: Any, module: Any) -> dict[str, Any]:
    """Every op of the module (nested regions, private functions): histogram, custom calls, loops."""
    ops: collections.Counter[str] = collections.Counter()
    targets: list[str] = []

    def visit(op: Any) -> Any:
        name = op.name
        ops[name] += 1
        if name == "stablehlo.custom_call":
            target = op.attributes["call_target_name"]
            targets.append(str(ir.StringAttr(target).value))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return {
        "ops": dict(sorted(ops.items())),
        "loop_ops": dict(sorted(loop_ops(ir, module).items())),
        # What an optimization barrier's results feed (the ``require_remat`` rule's evidence).
        **remat_summary(ir, module),
        "custom_calls": sorted(set(targets)),
        "loops": ops.get("stablehlo.while", 0),
        "functions": ops.get("func.func", 0),
        "host_callbacks": sorted({t for t in targets if _is_callback(t)}),
    }


def loop_ops(ir: Any, module: Any) -> collections.Counter[str]:
    """Histogram of the ops that run inside a loop: in the regions of a ``stablehlo.while`` (body and
    condition), nested regions (``case``, ``if``, a reducer) and the functions they ``func.call``,
    transitively (``jax.jit`` inside a scan body, or the scan body itself, becomes a private function).

    Walked from ``main`` through the call graph, each function once per context (in a loop or not), with
    an explicit stack (a crafted module cannot exhaust the Python stack). A program with no loop gives
    an empty histogram, whatever its size: this is what tells ``lax.scan`` from an unrolled Python loop.
    """
    functions: dict[str, Any] = {}
    for op in module.body.operations:
        operation = op.operation
        if operation.name == "func.func":
            functions[str(ir.StringAttr(operation.attributes["sym_name"]).value)] = operation
    counts: collections.Counter[str] = collections.Counter()
    if "main" not in functions:
        return counts
    seen: set[tuple[str, bool]] = {("main", False)}
    stack: list[tuple[Any, bool]] = [(functions["main"], False)]
    while stack:
        parent, in_loop = stack.pop()
        for region in parent.regions:
            for block in region.blocks:
                for op in block.operations:
                    operation = op.operation
                    name = operation.name
                    if in_loop:
                        counts[name] += 1
                    if name == "func.call":
                        callee = str(ir.FlatSymbolRefAttr(operation.attributes["callee"]).value)
                        if callee in functions and (callee, in_loop) not in seen:
                            seen.add((callee, in_loop))
                            stack.append((functions[callee], in_loop))
                    if len(operation.regions):
                        stack.append((operation, in_loop or name == "stablehlo.while"))
    return counts


def _precheck(summary: dict[str, Any], precheck: Any) -> str | None:
    """The first op rule of the judge's ``precheck`` the program breaks (a short text), or None.

    ``require_loop_any``: a ``stablehlo.while`` whose body holds one of these ops; ``forbid_ops``: none of
    these ops anywhere. The judge words the verdict itself from the summary; this only spares the compile.
    """
    if not isinstance(precheck, dict):
        return None
    ops, in_loops = summary["ops"], summary["loop_ops"]
    required = precheck.get("require_loop_any")
    if isinstance(required, list) and required:
        if not ops.get("stablehlo.while"):
            return "the program has no loop"
        if not any(in_loops.get(op) for op in required):
            return f"no loop of the program holds {' or '.join(map(str, required))}"
    forbidden = precheck.get("forbid_ops")
    if isinstance(forbidden, list):
        used = sorted(str(op) for op in forbidden if ops.get(op))
        if used:
            return f"the program uses {', '.join(used)}"
    return None


def tensor_types(ir: Any, main: Any, which: str) -> list[tuple[str, tuple[int, ...]]]:
    function = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    out = []
    for kind in function.inputs if which == "inputs" else function.results:
        try:
            tensor = ir.RankedTensorType(kind)
        except (ValueError, TypeError):
            raise Refused(
                "outputs" if which == "results" else "inputs", f"the program has a non-tensor {which[:-1]}"
            ) from None
        if not tensor.has_static_shape:
            raise Refused("outputs" if which == "results" else "inputs", "the program has a dynamic shape")
        element = str(tensor.element_type)
        if element not in ELEMENT_TYPES:
            raise Refused(
                "outputs" if which == "results" else "inputs",
                f"the program uses the unsupported dtype {element}",
            )
        out.append((ELEMENT_TYPES[element], tuple(int(d) for d in tensor.shape)))
    return out


#: Attributes of ``main``'s arguments that make XLA alias an input with an output (``ProgramChecker.donate``).
_ALIASING_ATTRIBUTES = ("tf.aliasing_output", "jax.buffer_donor")


def _is_callback(target: str) -> bool:
    return target in HOST_CALLBACK_TARGETS or "callback" in target.lower()
