# Trace error: float() on a traced value (ConcretizationTypeError under jax.jit).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = float(jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves)))
    scale = min(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": jnp.float32(norm)}
