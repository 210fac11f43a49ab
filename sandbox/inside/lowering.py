"""Programs as data: a traced jaxpr lowered to StableHLO and written as MLIR bytecode, and read back.

The tracer lowers each signature's trace with ``lower`` and sends the bytes; the executor reads them with
``parse`` into its own MLIR context, checks every op and compiles the module. Both run the same jaxlib (one
lock file, one image), so the program need not be a portable artifact (``jax.export``'s versioned VHLO
form, made for crossing versions): measured here on global-norm-clipping's 16 signatures, lowering plus
bytecode costs 6.4 ms per signature against 11.7 ms for ``jax.export``, and reading it back 0.7 ms against
1.4 ms, with compiled outputs bit-for-bit the same on every problem tried.

Lowering needs no XLA backend (``backend=None``, platform ``cpu``) and starts no thread in a single-threaded
MLIR context, so the zygote warms this very path before it forks, and a forked tracer never starts a
backend unless it runs the function for its prints.

Nothing here is a check: a tracer's bytes are a claim, and the executor parses, inspects and refuses what it
must not compile whatever this module (or user code patching it) produced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Lowerer:
    """``lower(closed_jaxpr) -> bytes``: references taken at construction, before any user code runs."""

    def __init__(self) -> None:
        from jax._src import effects, sharding_impls
        from jax._src.interpreters import mlir

        self._to_module: Callable[..., Any] = mlir.lower_jaxpr_to_module
        self._to_bytecode: Callable[[Any], bytes] = mlir.module_to_bytecode
        self._one_device: Any = sharding_impls.ShardingContext(1, None, None)
        self._parameters: Any = mlir.LoweringParameters()
        self._ordered: Any = effects.ordered_effects
        #: The last module lowered, for ``text`` (the program view of a public signature).
        self._last: Any = None

    def ordered_effects(self, jaxpr: Any) -> list[Any]:
        """The trace's ordered side effects: a compiled program would thread tokens through them."""
        return list(self._ordered.filter_in(jaxpr.effects))

    def __call__(self, jaxpr: Any) -> bytes:
        """The StableHLO module of ``jaxpr`` (a ClosedJaxpr; its constants become module constants) with one
        public ``main`` taking every input, in order, as MLIR bytecode."""
        lowered = self._to_module(
            "main",
            jaxpr,
            num_const_args=0,
            in_avals=jaxpr.in_avals,
            ordered_effects=self.ordered_effects(jaxpr),
            platforms=("cpu",),
            backend=None,
            axis_context=self._one_device,
            donated_args=[False] * len(jaxpr.in_avals),
            lowering_parameters=self._parameters,
        )
        self._last = lowered.module
        return self._to_bytecode(lowered.module)

    def text(self, limit: int) -> str:
        """The last module lowered, as StableHLO text (large constants elided), ``limit`` chars at most."""
        if self._last is None:
            return ""
        text: str = self._last.operation.get_asm(large_elements_limit=16)
        return text[:limit]


def parse(ir: Any, data: bytes) -> Any:
    """The module in ``data`` (MLIR bytecode), read in the current MLIR context and verified by MLIR."""
    return ir.Module.parse(data)
