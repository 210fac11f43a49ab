"""Reference for ``problems/ema-scan``: the exponential moving average at every step, by ``jax.lax.scan``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def ema_scan(xs: Any, init: Any, decay: Any) -> Any:
    """Return the stacked averages ``m_1 .. m_T`` (shape and dtype of ``xs``), where ``m_0 = init`` and
    ``m_t = decay * m_{t-1} + (1 - decay) * xs[t - 1]``, without bias correction.

    Time is ``xs``'s leading axis; ``init`` has the shape of one step ``xs[0]``. The running average is
    carried in float32 whatever the case dtype and each step's value is cast to ``xs.dtype`` as it is stored.
    """
    d = jnp.asarray(decay, jnp.float32)

    def step(m: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m.astype(xs.dtype)

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history


def ema_scan_magnitude(xs: Any, init: Any, decay: Any) -> Any:
    """Per stored average, the magnitude of the terms that make it (``[compare] magnitude``): the same
    recursion on absolute values, ``M_t = decay M_{t-1} + (1 - decay) |xs[t - 1]|`` from ``M_0 = |init|``,
    in float32. An average of values of both signs that cancels keeps the size of what it averaged."""
    return ema_scan(jnp.abs(xs.astype(jnp.float32)), jnp.abs(init.astype(jnp.float32)), decay)
