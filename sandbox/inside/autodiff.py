"""Autodiff seeds scaled for a second call of the user's function (the ``require_autodiff`` rule).

Everything reverse-mode autodiff returns is linear in the cotangent it starts from (``jax.grad`` starts from
1.0), and everything forward mode returns is linear in the tangent. ``SeedScaler`` (made before user code
loads, from references it takes then) multiplies those seeds by a factor while its context is active:
every cotangent that reaches a ``jax.vjp`` pullback (``jax.grad``, ``value_and_grad``, ``jacrev`` and
``hessian`` pull back through it) and every tangent that enters ``jax.jvp`` (``jacfwd`` pushes forward through
it). It swaps the two module-level functions of ``jax._src.api`` those public functions call at call time,
so ``from jax import grad`` imported before the swap is scaled too, and it enters a jit-cache context of its
own so that a ``jax.jit`` inside the user's code traces again instead of reusing the unscaled trace.

``with_autodiff_twice`` returns ``(fn(*args), fn(*args) with seeds scaled)`` in one trace; the judge checks
that the outputs the problem names scaled (``judge.grading.transform_rules``). This runs beside user code, so
it is evidence and not proof: ``judge.grading.transform_rules`` says what it decides and what it cannot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any


class SeedScaler:
    """The swap, prepared from references taken now (call before any user code runs)."""

    def __init__(self) -> None:
        import jax
        from jax._src import api
        from jax._src.interpreters import ad

        self.api: Any = api
        self.bwd: Callable[..., Any] = api._vjp3_bwd
        self.jvp: Callable[..., Any] = api._jvp
        self.zero_type: type = ad.Zero  # type: ignore[attr-defined]
        self.tree_map: Callable[..., Any] = jax.tree_util.tree_map
        self.context: Callable[[Any], Any] = jax.make_user_context(None)  # type: ignore[no-untyped-call]

    def _scale(self, tree: Any, factor: float) -> Any:
        def one(leaf: Any) -> Any:
            if isinstance(leaf, self.zero_type):
                return leaf
            dtype = getattr(leaf, "dtype", None)
            if dtype is not None and getattr(dtype, "kind", "f") not in "fc" and str(dtype) != "bfloat16":
                return leaf  # float0 or integer tangents carry nothing to scale
            return leaf * factor

        return self.tree_map(one, tree, is_leaf=lambda x: isinstance(x, self.zero_type))

    @contextlib.contextmanager
    def scaled(self, factor: float) -> Iterator[None]:
        bwd, jvp, scale = self.bwd, self.jvp, self._scale

        def scaled_bwd(*args: Any) -> Any:
            *head, out_ct = args
            return bwd(*head, scale(out_ct, factor))

        def scaled_jvp(fun: Any, primals: Any, tangents: Any, has_aux: bool = False) -> Any:
            return jvp(fun, primals, scale(tangents, factor), has_aux=has_aux)

        self.api._vjp3_bwd, self.api._jvp = scaled_bwd, scaled_jvp
        try:
            with self.context(("autodiff_seed_scale", factor)):
                yield
        finally:
            self.api._vjp3_bwd, self.api._jvp = bwd, jvp


def with_autodiff_twice(
    fn: Callable[..., Any],
    args: list[Any],
    scaler: SeedScaler,
    factor: float,
    quiet: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
    scaled_first: bool = False,
) -> tuple[Any, Any]:
    """``(fn(*args), fn(*args) scaled)``: the scaled call with every autodiff seed multiplied by ``factor``;
    ``scaled_first``: it is made before the plain one. The second call made runs inside ``quiet`` (the
    tracer silences its Python prints: the first call printed them)."""
    if scaled_first:
        with scaler.scaled(factor):
            second = fn(*args)
        with quiet():
            first = fn(*args)
        return first, second
    first = fn(*args)
    with scaler.scaled(factor), quiet():
        second = fn(*args)
    return first, second
