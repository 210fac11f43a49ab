# Accepted: float32 norm; each leaf divided in its own dtype (bfloat16 too) by the shrink factor norm / c.
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.vdot(x, x) for x in (leaf.astype(jnp.float32) for leaf in reversed(leaves))))
    shrink = jnp.maximum(norm / max_norm, 1.0)
    return {"clipped": jax.tree.map(lambda g: g / shrink.astype(g.dtype), grads), "global_norm": norm}
