"""What the program recomputes behind an optimization barrier, from the module the executor parsed (never
from the tracer, which runs user code): the evidence for the ``require_remat`` rule
(``judge.grading.compiled_rules``).

``jax.checkpoint`` (``jax.remat``) saves only a function's inputs for the backward pass and computes the
function again there; so that XLA cannot merge the second computation with the first (common
subexpression elimination), JAX passes the saved inputs through a ``stablehlo.optimization_barrier`` and
recomputes the forward ops from the barrier's results. A program that stores its activations and merely
holds a barrier beside them (on a value nothing computes from, or whose results are dropped) has the op
but not the recomputation. So the executor reports what the barrier's results feed:

- ``recomputed_ops``: a histogram of the ops that depend on a barrier's result (transitively) and whose
  results reach the program's outputs. Dead code stays in the lowered module (JAX does not remove it;
  XLA does, when it compiles), so a recomputation nothing uses is not counted.
- ``barrier_outputs``: per output of ``main``, whether it depends on a barrier's result. The forward
  value of a checkpointed function comes from the first, ordinary computation; only the backward pass
  reads the barrier.

Dependence is followed through every op, nested regions (an op with regions depends on a barrier when
one of its operands or any op inside it does; a region's arguments depend on one when the op's operands
do) and private functions (a call's results depend on a barrier when one of its operands does or the
callee's outputs do from a barrier of its own; a callee's arguments, for counting the ops inside it, when
some call passes them such a value), to a fixed point.
Liveness is followed back from ``main``'s outputs: an op with regions that is live keeps its regions'
terminators live, a live call keeps the callee's outputs live, and a callee's argument that a live op
uses keeps that operand of every call site live (an over-approximation: a dead call site's operand counts
as used). Both walks use explicit stacks and bounded passes: a crafted module cannot exhaust the Python
stack.
"""

from __future__ import annotations

import collections
from typing import Any

BARRIER = "stablehlo.optimization_barrier"
#: Passes over the module before the dependence of calls is taken as settled (each pass settles at least
#: one more level of calls; JAX's programs nest a few).
MAX_PASSES = 32


def remat_summary(ir: Any, module: Any) -> dict[str, Any]:
    """``{"recomputed_ops": {name: count}, "barrier_outputs": [bool, ...]}`` for ``module`` (see the module
    docstring); both empty when the program holds no barrier or no ``main``."""
    functions: dict[str, Any] = {}
    for op in module.body.operations:
        operation = op.operation
        if operation.name == "func.func":
            functions[str(ir.StringAttr(operation.attributes["sym_name"]).value)] = operation
    has_barrier = False

    def find(op: Any) -> Any:
        nonlocal has_barrier
        if op.name == BARRIER:
            has_barrier = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(find)
    if "main" not in functions or not has_barrier:
        return {"recomputed_ops": {}, "barrier_outputs": []}
    # First what each function's outputs take from barriers of its own (its arguments clean), then, with
    # that, what every op takes from a barrier, arguments included (what a call passes in).
    intrinsic = _Dependence(ir, functions, None)
    intrinsic.settle()
    flow = _Dependence(ir, functions, intrinsic.tainted_returns)
    flow.settle()
    live = _live(ir, functions)
    recomputed: collections.Counter[str] = collections.Counter(
        op.name for op in live if op in flow.tainted_ops
    )
    main_return = _returns(functions["main"])
    outputs = [flow.tainted(value) for ret in main_return for value in ret.operands]
    return {"recomputed_ops": dict(sorted(recomputed.items())), "barrier_outputs": outputs}


def _returns(function: Any) -> list[Any]:
    """The ``func.return`` ops of a function (the last op of each of its blocks)."""
    out = []
    for region in function.regions:
        for block in region.blocks:
            last = None
            for op in block.operations:
                last = op.operation
            if last is not None:
                out.append(last)
    return out


def _callee(ir: Any, op: Any) -> str:
    return str(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)


class _Dependence:
    """Which ops (and so their results) depend on a barrier's result, over every function."""

    def __init__(self, ir: Any, functions: dict[str, Any], returns: set[str] | None) -> None:
        """``returns``: the functions whose outputs depend on a barrier of their own, for the results of
        calls; None: find them here, with every function's arguments taken as clean."""
        self.ir = ir
        self.with_args = returns is not None
        self.functions = functions
        self.owner_of = {function: name for name, function in functions.items()}
        self.tainted_ops: set[Any] = set()
        #: (function name, argument number) of callee arguments some call passes a dependent value.
        self.tainted_args: set[tuple[str, int]] = set()
        #: Functions one of whose outputs depends on a barrier's result.
        self.tainted_returns: set[str] = set() if returns is None else set(returns)
        self._region_inputs: dict[Any, bool] = {}

    def tainted(self, value: Any) -> bool:
        ir = self.ir
        if isinstance(value.owner, ir.Block):
            block = value.owner
            parent = block.owner.operation
            name = self.owner_of.get(parent)
            if name is not None:
                return self.with_args and (name, ir.BlockArgument(value).arg_number) in self.tainted_args
            return self._inputs_tainted(parent)
        return value.owner.operation in self.tainted_ops

    def _inputs_tainted(self, parent: Any) -> bool:
        """Whether an op with regions gets a dependent operand (its regions' arguments then depend too),
        following enclosing ops up without recursion."""
        chain = [parent]
        while chain:
            op = chain[-1]
            if op in self._region_inputs:
                chain.pop()
                continue
            pending = []
            answer = False
            for value in op.operands:
                owner = value.owner
                if isinstance(owner, self.ir.Block) and owner.owner.operation not in self.owner_of:
                    outer = owner.owner.operation
                    if outer not in self._region_inputs:
                        pending.append(outer)
                        continue
                    answer = answer or self._region_inputs[outer]
                else:
                    answer = answer or self.tainted(value)
            if pending:
                chain.extend(pending)
                continue
            self._region_inputs[op] = answer
            chain.pop()
        return self._region_inputs[parent]

    def settle(self) -> None:
        for _ in range(MAX_PASSES):
            before = (len(self.tainted_ops), len(self.tainted_args), len(self.tainted_returns))
            self._region_inputs.clear()
            for name, function in self.functions.items():
                self._pass(name, function)
            if before == (len(self.tainted_ops), len(self.tainted_args), len(self.tainted_returns)):
                return

    def _pass(self, name: str, function: Any) -> None:
        ir = self.ir
        inside: set[Any] = set()  # ops with a dependent op somewhere in their regions

        def visit(op: Any) -> Any:
            op = op.operation
            if op == function:
                return ir.WalkResult.ADVANCE
            dependent = op.name == BARRIER or op in inside or any(self.tainted(v) for v in op.operands)
            if op.name == "func.call":
                callee = _callee(ir, op)
                for index, value in enumerate(op.operands):
                    if self.tainted(value):
                        self.tainted_args.add((callee, index))
                dependent = dependent or callee in self.tainted_returns
            if op.name == "func.return" and dependent and not self.with_args:
                self.tainted_returns.add(name)
            if dependent:
                self.tainted_ops.add(op)
                parent = op.parent
                while parent is not None and parent.operation != function:
                    inside.add(parent.operation)
                    parent = parent.parent
            return ir.WalkResult.ADVANCE

        function.walk(visit, ir.WalkOrder.POST_ORDER)


def _live(ir: Any, functions: dict[str, Any]) -> set[Any]:
    """The ops whose results reach ``main``'s outputs (see the module docstring)."""
    owner_of = {function: name for name, function in functions.items()}
    calls: dict[str, list[Any]] = collections.defaultdict(list)

    def collect(op: Any) -> Any:
        if op.name == "func.call":
            calls[_callee(ir, op)].append(op.operation)
        return ir.WalkResult.ADVANCE

    for function in functions.values():
        function.walk(collect)
    live: set[Any] = set()
    stack: list[Any] = list(_returns(functions["main"]))
    while stack:
        op = stack.pop()
        if op in live:
            continue
        live.add(op)
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, ir.Block):
                parent = owner.owner.operation
                name = owner_of.get(parent)
                if name is None:
                    stack.append(parent)
                    continue
                index = ir.BlockArgument(value).arg_number
                for site in calls.get(name, ()):
                    if index < len(site.operands):
                        argument = site.operands[index]
                        if not isinstance(argument.owner, ir.Block):
                            stack.append(argument.owner.operation)
                        else:
                            stack.append(argument.owner.owner.operation)
            else:
                stack.append(owner.operation)
        for region in op.regions:
            for block in region.blocks:
                last = None
                for inner in block.operations:
                    last = inner.operation
                if last is not None:
                    stack.append(last)
        if op.name == "func.call":
            callee = functions.get(_callee(ir, op))
            if callee is not None:
                stack.extend(_returns(callee))
    return live
