# Accepted: optax-like: keep a leaf when norm < max_norm, else leaf / norm * max_norm (in the leaf dtype).
import jax
import jax.numpy as jnp


def _global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(jnp.square(x.astype(jnp.float32))) for x in jax.tree.leaves(tree)))


def clip_by_global_norm(grads, max_norm):
    g_norm = _global_norm(grads)
    keep = g_norm < max_norm

    def clip(t):
        # Where keep is true (this includes g_norm == 0) the NaN of t / 0 is never selected.
        return jnp.where(keep, t, (t / g_norm.astype(t.dtype)) * max_norm)

    return {"clipped": jax.tree.map(clip, grads), "global_norm": g_norm}
