"""Reference for ``problems/device-mesh-sharding``: a matmul laid out over a (4, 2) device mesh.

The mesh has axes ``data`` (4 devices) and ``model`` (2), device ``2 i + j`` at position ``(i, j)``:
``y = x @ w`` is split by rows over ``data`` and by columns over ``model``; ``top = max(y, axis=1)`` is
split by rows over ``data`` and replicated over ``model``. It runs on the trusted side on 8 CPU host
devices, inputs replicated (``judge.core.mesh_reference``), and each output's sharding is what learners'
outputs are compared with.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


def shard_activations(x: Any, w: Any) -> dict[str, Any]:
    """``{"y": x @ w, "top": max(y, axis=1)}``, each constrained to its layout on the mesh."""
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jnp.dot(x, w, precision=jax.lax.Precision.HIGHEST)
    y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("data", "model")))
    top = jax.lax.with_sharding_constraint(jnp.max(y, axis=1), NamedSharding(mesh, P("data")))
    return {"y": y, "top": top}


def shard_activations_magnitude(x: Any, w: Any) -> dict[str, Any]:
    """Per output element, the sum of the absolute values of its terms (``[compare] magnitude``): ``|x| |w|``
    for ``y``, and for ``top`` the largest of its row (the maximum is one of the row's elements)."""
    y = jnp.dot(jnp.abs(x), jnp.abs(w), precision=jax.lax.Precision.HIGHEST)
    return {"y": y, "top": jnp.max(y, axis=1)}
