"""The executor's MLIR contexts (``sandbox.inside.lowering.lean_ir_context``) read programs exactly as JAX's
own contexts do, though they load a dialect only when a program uses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

from sandbox.inside.lowering import lean_ir_context, parse

F32 = jnp.float32


def _scan(xs: Any) -> Any:
    return jax.lax.scan(lambda c, x: (c + jnp.tanh(x), c * x), jnp.zeros(3, F32), xs)


PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "elementwise and reductions": (
        lambda x: jnp.sum(jnp.hypot(x, x) * jax.nn.gelu(x)),
        (jnp.ones((4, 3), F32),),
    ),
    "svd, solve, eigh (LAPACK custom calls)": (
        lambda a: (jnp.linalg.svd(a)[1], jnp.linalg.solve(a, a[0]), jnp.linalg.eigh(a @ a.T)[0]),
        (jnp.eye(4, dtype=F32) + 0.1,),
    ),
    "a scan (a while loop)": (_scan, (jnp.ones((5, 3), F32),)),
    "chlo ops (erf_inv, top_k)": (
        lambda x: (jax.lax.erf_inv(x * 0.5), jax.lax.top_k(x, 2)),
        (jnp.ones(6, F32) * 0.3,),
    ),
    "a gradient": (
        jax.grad(lambda w, x: jnp.sum(jnp.logaddexp(w * x, x))),
        (jnp.ones(3, F32), jnp.ones(3, F32)),
    ),
}


def _bytecode(fn: Callable[..., Any], args: tuple[Any, ...]) -> bytes:
    module = jax.jit(fn).lower(*args).compiler_ir("stablehlo")
    assert module is not None
    return bytes(mlir.module_to_bytecode(module))


def _jax_context() -> Any:
    # JAX's own maker, even where a tracer made earlier in this test process replaced it with a shared one.
    make = getattr(mlir.make_ir_context, "unshared", mlir.make_ir_context)
    return make()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_program_reads_the_same_in_a_lean_context(name: str) -> None:
    fn, args = PROGRAMS[name]
    data = _bytecode(fn, args)
    texts = []
    for context in (lean_ir_context(), _jax_context()):
        with context:
            texts.append(parse(ir, data).operation.get_asm(enable_debug_info=False))
    assert texts[0] == texts[1]


def test_a_registered_dialect_loads_when_a_program_uses_it() -> None:
    """Upstream dialects (math, arith) are registered, not loaded: parsing a module of them loads them."""
    text = """
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = math.tanh %arg0 : tensor<4xf32>
      %1 = arith.addf %0, %0 : tensor<4xf32>
      return %1 : tensor<4xf32>
    }"""
    context = lean_ir_context()
    with context:
        module = ir.Module.parse(text)
        assert "math.tanh" in str(module)


def test_an_unregistered_dialect_is_still_refused() -> None:
    context = lean_ir_context()
    with context, pytest.raises(ir.MLIRError):
        ir.Module.parse('func.func @main() { "judge_unknown.op"() : () -> () \n return }')
