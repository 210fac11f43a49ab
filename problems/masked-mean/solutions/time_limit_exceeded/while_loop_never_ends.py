# Time limit: a jax.lax.while_loop whose condition stays true, so the compiled program never finishes.
import jax
import jax.numpy as jnp


def masked_mean(x, mask):
    count = jnp.sum(mask, axis=-1)

    def body(c):
        return jnp.maximum(c, 1)

    count = jax.lax.while_loop(lambda c: jnp.all(c >= 0), body, count)
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1)
    return (total / count).astype(x.dtype)
