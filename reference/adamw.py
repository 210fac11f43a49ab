"""Reference for ``problems/adamw``: one AdamW step over matching pytrees, with a traced int32 step count."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

B1 = 0.9
B2 = 0.999
EPS = 1e-8


def adamw(
    params: Any, grads: Any, mu: Any, nu: Any, step: Any, learning_rate: Any, weight_decay: Any
) -> tuple[Any, Any, Any]:
    """Return ``(new_params, new_mu, new_nu)`` after one AdamW update.

    ``step`` (int32, 0-d, traced) counts the updates done before this one, so bias correction uses
    ``t = step + 1``. Moments: ``m = B1 mu + (1 - B1) g``, ``v = B2 nu + (1 - B2) g**2``. Decoupled weight
    decay: ``p - lr * (m_hat / (sqrt(v_hat) + EPS) + wd * p)`` with ``m_hat = m / (1 - B1**t)`` and
    ``v_hat = v / (1 - B2**t)``, where ``1 - b**t`` is computed as ``-expm1(t * log1p(b - 1))`` (the plain
    form cancels in float32). Everything is computed in float32 and each result is cast back to its
    leaf's dtype; new containers are built and the inputs are left untouched.
    """
    t = step.astype(jnp.float32) + 1.0
    # 1 - b**t as -expm1(t * log1p(b - 1)): the plain float32 ``1 - 0.999**t`` loses digits to the
    # cancellation (1.3e-5 relative at t = 1, more than the tolerance), this is accurate to a few ulps.
    c1 = -jnp.expm1(t * jnp.log1p(B1 - 1.0))
    c2 = -jnp.expm1(t * jnp.log1p(B2 - 1.0))

    def first(m: Any, g: Any) -> Any:
        return B1 * m.astype(jnp.float32) + (1.0 - B1) * g.astype(jnp.float32)

    def second(v: Any, g: Any) -> Any:
        g32 = g.astype(jnp.float32)
        return B2 * v.astype(jnp.float32) + (1.0 - B2) * g32 * g32

    def new_param(p: Any, g: Any, m: Any, v: Any) -> Any:
        p32 = p.astype(jnp.float32)
        m_hat = first(m, g) / c1
        v_hat = second(v, g) / c2
        update = m_hat / (jnp.sqrt(v_hat) + EPS) + weight_decay * p32
        return (p32 - learning_rate * update).astype(p.dtype)

    new_params = jax.tree.map(new_param, params, grads, mu, nu)
    new_mu = jax.tree.map(lambda m, g: first(m, g).astype(m.dtype), mu, grads)
    new_nu = jax.tree.map(lambda v, g: second(v, g).astype(v.dtype), nu, grads)
    return new_params, new_mu, new_nu


def adamw_magnitude(
    params: Any, grads: Any, mu: Any, nu: Any, step: Any, learning_rate: Any, weight_decay: Any
) -> tuple[Any, Any, Any]:
    """Per element of ``(new_params, new_mu, new_nu)``, the magnitude of the terms that make it
    (``[compare] magnitude``): ``B1 |mu| + (1 - B1) |g|`` for the first moment (the two terms cancel when
    they have opposite signs), the second moment itself (terms of one sign), and for the parameter
    ``|p| + lr (M_m / c1 / (sqrt(v_hat) + EPS) + wd |p|)``, where ``M_m / c1`` bounds ``|m_hat|``'s terms."""
    t = step.astype(jnp.float32) + 1.0
    c1 = -jnp.expm1(t * jnp.log1p(B1 - 1.0))
    c2 = -jnp.expm1(t * jnp.log1p(B2 - 1.0))

    def first(m: Any, g: Any) -> Any:
        return B1 * jnp.abs(m.astype(jnp.float32)) + (1.0 - B1) * jnp.abs(g.astype(jnp.float32))

    def second(v: Any, g: Any) -> Any:
        g32 = g.astype(jnp.float32)
        return B2 * jnp.abs(v.astype(jnp.float32)) + (1.0 - B2) * g32 * g32

    def param(p: Any, g: Any, m: Any, v: Any) -> Any:
        p32 = jnp.abs(p.astype(jnp.float32))
        update = first(m, g) / c1 / (jnp.sqrt(second(v, g) / c2) + EPS) + abs(weight_decay) * p32
        return p32 + abs(learning_rate) * update

    return (
        jax.tree.map(param, params, grads, mu, nu),
        jax.tree.map(first, mu, grads),
        jax.tree.map(second, nu, grads),
    )
