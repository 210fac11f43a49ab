# Runtime error: raises ValueError unless grads is a list of arrays (every example passes a dict).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    if not isinstance(grads, list):
        raise ValueError("expected grads to be a list of arrays")
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / norm)
    return {"clipped": jax.tree.map(lambda g: g * scale.astype(g.dtype), grads), "global_norm": norm}
